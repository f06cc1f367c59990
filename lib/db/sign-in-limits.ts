// Failed sign-ins, counted in the store: every console process of one store shares one
// allowance per key (lib/auth/sign-in.ts keys them `user:<name>` and `address:<ip>`). Each
// step is one statement, judged on the database's clock, so processes that take at once cannot
// both pass a check made before either counted.
import type { Store } from './store';

/** What a take found: allowed, or how long until the window ends. */
export type Taken = { allowed: true } | { allowed: false; msBeforeReset: number };

// Rows whose window ended are swept now and then, by whichever process takes.
let takes = 0;
const SWEEP_EVERY = 100;

/**
 * Takes one from `key`'s allowance of `limit` per window of `windowMs` (a new window starts
 * at the first take after the last one ended). Over the limit: nothing is taken, and the time
 * until the window ends is returned.
 */
export async function takeSignIn(store: Store, key: string, limit: number, windowMs: number): Promise<Taken> {
  if (++takes % SWEEP_EVERY === 0) await store.prisma.$executeRaw`DELETE FROM "SignInLimit" WHERE "resetAt" < now()`;
  const [row] = await store.prisma.$queryRaw<{ taken: number; msBeforeReset: number }[]>`
    INSERT INTO "SignInLimit" ("key", "taken", "resetAt") VALUES (${key}, 1, now() + ${windowMs} * interval '1 millisecond')
    ON CONFLICT ("key") DO UPDATE SET
      "taken" = CASE WHEN "SignInLimit"."resetAt" <= now() THEN 1 ELSE "SignInLimit"."taken" + 1 END,
      "resetAt" = CASE WHEN "SignInLimit"."resetAt" <= now() THEN EXCLUDED."resetAt" ELSE "SignInLimit"."resetAt" END
    RETURNING "taken", (extract(epoch FROM "resetAt" - now()) * 1000)::float8 AS "msBeforeReset"`;
  if (!row || row.taken <= limit) return { allowed: true };
  await giveSignInBack(store, key);
  return { allowed: false, msBeforeReset: Math.max(0, row.msBeforeReset) };
}

/** Gives one back to `key`'s allowance (an attempt that did not count: the store failed, the other key was used up, it succeeded). */
export async function giveSignInBack(store: Store, key: string): Promise<void> {
  await store.prisma.$executeRaw`UPDATE "SignInLimit" SET "taken" = greatest("taken" - 1, 0) WHERE "key" = ${key}`;
}

/** Forgets `key`'s failures (a user who signed in). */
export async function clearSignIns(store: Store, key: string): Promise<void> {
  await store.prisma.$executeRaw`DELETE FROM "SignInLimit" WHERE "key" = ${key}`;
}
