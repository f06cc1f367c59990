// Which Leasehold release migrated a store (the "StoreRelease" table: one row per release,
// with the last migration it applied). A release that finds migrations it does not ship in the
// store was started against a store a newer release has migrated: it must not run there (its
// writes would not know the newer columns and rules), and the row says which release to run.
import type { SqlSession } from './sql';

type ReleaseRow = { version: string; lastMigration: string; migratedAt: Date };

const tableExists = async (session: SqlSession) =>
  (await session.query<{ exists: boolean }>(`SELECT to_regclass('"StoreRelease"') IS NOT NULL AS "exists"`))[0]?.exists === true;

/**
 * Why this release must not run on the store, in a sentence that names the release to run:
 * `unknown` are the migrations the store has and this release does not ship.
 */
export async function aheadOfRelease(session: SqlSession, unknown: string[], release: string): Promise<string> {
  const latest = [...unknown].sort().at(-1)!;
  const rows = (await tableExists(session)) ? await session.query<ReleaseRow>('SELECT "version", "lastMigration", "migratedAt" FROM "StoreRelease"') : [];
  // The release that went furthest: the one whose last migration sorts last among those this one does not ship.
  const newer = rows.filter((row) => unknown.includes(row.lastMigration)).sort((a, b) => a.lastMigration.localeCompare(b.lastMigration)).at(-1);
  const what = `${unknown.length === 1 ? 'a migration' : `${unknown.length} migrations`} this release does not ship (${unknown.slice(0, 5).join(', ')}${unknown.length > 5 ? ', ...' : ''})`;
  const run = newer
    ? newer.version === release
      ? `it was migrated by another build of Leasehold ${release} on ${newer.migratedAt.toISOString().slice(0, 10)}: run that build, or a later release`
      : `it was migrated by Leasehold ${newer.version} on ${newer.migratedAt.toISOString().slice(0, 10)}: run Leasehold ${newer.version} or later against it`
    : `the release that applied them did not record itself: run the Leasehold release that ships ${latest}, or a later one`;
  return `This store is ahead of Leasehold ${release}: it has ${what}; ${run} (or point this one at another store). Nothing was changed.`;
}

/** Notes that `release` has migrated the store up to `lastMigration` (where the table exists yet). */
export async function recordRelease(session: SqlSession, release: string, lastMigration: string): Promise<void> {
  if (!(await tableExists(session))) return;
  await session.query(
    `INSERT INTO "StoreRelease" ("version", "lastMigration", "migratedAt") VALUES ($1, $2, now())
     ON CONFLICT ("version") DO UPDATE SET "lastMigration" = EXCLUDED."lastMigration", "migratedAt" = EXCLUDED."migratedAt"
     WHERE "StoreRelease"."lastMigration" IS DISTINCT FROM EXCLUDED."lastMigration"`,
    [release, lastMigration],
  );
}
