// The store's "CollectorLease" table as the collectors share sources out
// (lib/collector/ownership.ts): every lease with the time left on it, and the memberships of
// collectors long gone, forgotten.
import type { Store } from './store';

/** Every lease of the table: its name, holder and how long until it expires (0 or less: expired). */
export function readCollectorLeases(store: Store): Promise<{ name: string; owner: string | null; expiresInMs: number }[]> {
  return store.prisma.$queryRaw<{ name: string; owner: string | null; expiresInMs: number }[]>`SELECT name, owner, (extract(epoch FROM expires_at - now()) * 1000)::float8 AS "expiresInMs" FROM "CollectorLease"`;
}

/** Deletes the memberships (`collector:<id>`) that expired over an hour ago: each collector start adds one. */
export async function forgetGoneCollectors(store: Store): Promise<void> {
  await store.prisma.$executeRaw`DELETE FROM "CollectorLease" WHERE name LIKE 'collector:%' AND expires_at < now() - interval '1 hour'`;
}
