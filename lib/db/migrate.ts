// The migration runner.
//
// Prisma's own `migrate deploy` needs a native schema engine that is downloaded at install
// time from a host offline machines cannot reach. The migrations are plain SQL in Prisma's
// folder format (prisma/migrations/<timestamp>_<name>/migration.sql), so we apply them
// ourselves and record them in `_prisma_migrations` the way `prisma migrate deploy` does:
// one row per folder name, checksum = sha256 hex of migration.sql, finished_at set,
// applied_steps_count 1. A user who has Prisma's engine can switch to it at any time.
//
// One difference, on purpose: each migration runs in one transaction together with its
// record, so a failing migration leaves neither half-applied changes nor a failed row
// behind, and the next run simply tries again.
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { systemClock } from '../time/clock';
import type { SqlSession } from './sql';
import { LEASEHOLD_VERSION } from '../version';
import { aheadOfRelease, recordRelease } from './store-release';

/** The advisory lock key `prisma migrate` itself takes, so the two never run at once. */
export const PRISMA_MIGRATE_LOCK_KEY = 72707369;

export const MIGRATIONS_TABLE_DDL = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

export type Migration = { name: string; sql: string; checksum: string };

export type MigrationStatus = {
  /** Migrations in the folder, in order. */
  known: string[];
  /** Applied successfully (and not rolled back). */
  applied: string[];
  /** In the folder, not applied yet, in the order they will be applied. */
  pending: string[];
  /** Applied, but migration.sql has changed since (checksum differs). */
  modified: string[];
  /** Recorded as started and never finished (a failed `prisma migrate deploy`): blocks migrating. */
  failed: string[];
  /** Recorded in the database, absent from the folder (the database is newer than this code). */
  unknown: string[];
};

export type MigrationErrorCode = 'failed_migration' | 'migration_failed' | 'lock_timeout' | 'aborted' | 'bad_folder' | 'store_ahead';

export class MigrationError extends Error {
  constructor(
    readonly code: MigrationErrorCode,
    message: string,
    readonly migration?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'MigrationError';
  }
}

export function defaultMigrationsDir(): string {
  return process.env.LEASEHOLD_MIGRATIONS_DIR ?? path.join(process.cwd(), 'prisma', 'migrations');
}

export function checksumOf(sql: string | Buffer): string {
  return createHash('sha256').update(sql).digest('hex');
}

/** Reads the migration folders, sorted by name. Fails with MigrationError('bad_folder') on a folder without migration.sql. */
export function readMigrations(dir: string = defaultMigrationsDir()): Migration[] {
  if (!existsSync(/*turbopackIgnore: true*/ dir)) throw new MigrationError('bad_folder', `The migrations folder ${dir} does not exist.`);
  return readdirSync(/*turbopackIgnore: true*/ dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const file = path.join(dir, name, 'migration.sql');
      if (!existsSync(/*turbopackIgnore: true*/ file)) {
        throw new MigrationError('bad_folder', `The migration folder ${name} has no migration.sql.`, name);
      }
      const bytes = readFileSync(/*turbopackIgnore: true*/ file);
      return { name, sql: bytes.toString('utf8'), checksum: checksumOf(bytes) };
    });
}

type MigrationRow = {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
};

/** Compares the folder with `_prisma_migrations`. Read-only: creates nothing. */
export async function migrationStatus(session: SqlSession, migrations: Migration[]): Promise<MigrationStatus> {
  const [{ exists } = { exists: false }] = await session.query<{ exists: boolean }>(
    `SELECT to_regclass('"_prisma_migrations"') IS NOT NULL AS "exists"`,
  );
  const rows = exists
    ? await session.query<MigrationRow>(
        'SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" ORDER BY started_at, migration_name',
      )
    : [];
  return compareWithFolder(migrations, rows);
}

function compareWithFolder(migrations: Migration[], rows: MigrationRow[]): MigrationStatus {
  const live = rows.filter((row) => row.rolled_back_at === null);
  const appliedRows = new Map(live.filter((row) => row.finished_at !== null).map((row) => [row.migration_name, row]));
  const failedNames = new Set(live.filter((row) => row.finished_at === null).map((row) => row.migration_name));
  const known = migrations.map((m) => m.name);
  const knownSet = new Set(known);
  return {
    known,
    applied: migrations.filter((m) => appliedRows.has(m.name)).map((m) => m.name),
    pending: migrations.filter((m) => !appliedRows.has(m.name) && !failedNames.has(m.name)).map((m) => m.name),
    modified: migrations.filter((m) => {
      const row = appliedRows.get(m.name);
      return row !== undefined && row.checksum !== m.checksum;
    }).map((m) => m.name),
    failed: [...failedNames].filter((name) => !appliedRows.has(name)),
    unknown: [...appliedRows.keys()].filter((name) => !knownSet.has(name)),
  };
}

export type MigrateOptions = {
  migrations?: Migration[];
  signal?: AbortSignal;
  /** How long to wait for another process that is migrating the same database. */
  lockTimeoutMs?: number;
  log?: (line: string) => void;
  /** The release migrating (default: this build's, package.json), recorded in "StoreRelease" and named when the store is ahead of it. */
  release?: string;
};

export type MigrateResult = { applied: string[]; status: MigrationStatus };

/**
 * Applies every pending migration, in order, each in its own transaction with its record.
 *
 * Fails with MigrationError:
 * - `failed_migration` when the database records a migration that started and never
 *   finished (left by `prisma migrate deploy`): a person must resolve it first;
 * - `migration_failed` when a migration's SQL fails (nothing of it is left applied);
 * - `store_ahead` when the store has migrations this release does not ship (a newer release
 *   migrated it): the message names the release to run, and nothing is changed;
 * - `lock_timeout` when another process keeps the migrate lock longer than lockTimeoutMs;
 * - `aborted` when the signal fires.
 */
export async function migrate(session: SqlSession, options: MigrateOptions = {}): Promise<MigrateResult> {
  const migrations = options.migrations ?? readMigrations();
  const log = options.log ?? (() => {});
  const signal = options.signal;
  const release = options.release ?? LEASEHOLD_VERSION;

  // 1. Serialise with any other migrator of this database (ours or Prisma's). PGlite is a
  //    single process guarded by its lock file, so it needs no lock here.
  const locked = session.kind === 'postgres' && (await takeMigrateLock(session, options.lockTimeoutMs ?? 60_000, signal));
  try {
    // 2. Read what is applied only after taking the lock: another process may just have
    //    applied what we were about to apply.
    await session.exec(MIGRATIONS_TABLE_DDL);
    const before = await migrationStatus(session, migrations);
    if (before.failed.length > 0) {
      throw new MigrationError(
        'failed_migration',
        `The database records migration ${before.failed[0]} as started but never finished. ` +
          'Inspect the database, then mark it with `prisma migrate resolve --rolled-back` or `--applied` ' +
          '(or fix the row in "_prisma_migrations") before migrating again.',
        before.failed[0],
      );
    }
    for (const name of before.modified) {
      log(`warning: migration ${name} was changed after it was applied (checksum differs); it is not applied again`);
    }
    if (before.unknown.length > 0) {
      throw new MigrationError('store_ahead', await aheadOfRelease(session, before.unknown, release), before.unknown[0]);
    }

    // 3. Apply what is pending, each migration atomically with its record.
    const applied: string[] = [];
    for (const name of before.pending) {
      if (signal?.aborted) throw new MigrationError('aborted', 'Migrating was cancelled.', name);
      const migration = migrations.find((m) => m.name === name)!;
      const startedAt = systemClock.wall();
      try {
        await session.transaction(async (tx) => {
          const id = randomUUID();
          await tx.query(
            'INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, applied_steps_count) VALUES ($1, $2, $3, now(), 0)',
            [id, migration.checksum, migration.name],
          );
          await tx.exec(migration.sql);
          await tx.query(
            'UPDATE "_prisma_migrations" SET finished_at = clock_timestamp(), applied_steps_count = applied_steps_count + 1 WHERE id = $1',
            [id],
          );
        });
      } catch (error) {
        throw new MigrationError(
          'migration_failed',
          `Migration ${name} failed and was rolled back: ${(error as Error).message}`,
          name,
          { cause: error },
        );
      }
      applied.push(name);
      log(`applied ${name} (${systemClock.wall() - startedAt} ms)`);
    }
    const status = await migrationStatus(session, migrations);
    const last = status.applied.at(-1);
    if (last) await recordRelease(session, release, last);
    return { applied, status };
  } finally {
    if (locked) await session.query('SELECT pg_advisory_unlock($1)', [PRISMA_MIGRATE_LOCK_KEY]).catch(() => {});
  }
}

async function takeMigrateLock(session: SqlSession, timeoutMs: number, signal?: AbortSignal): Promise<true> {
  const deadline = systemClock.wall() + timeoutMs;
  for (;;) {
    const [row] = await session.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [
      PRISMA_MIGRATE_LOCK_KEY,
    ]);
    if (row?.locked) return true;
    if (signal?.aborted) throw new MigrationError('aborted', 'Migrating was cancelled while waiting for the migrate lock.');
    if (systemClock.wall() >= deadline) {
      throw new MigrationError(
        'lock_timeout',
        `Another process has been migrating this database for over ${Math.round(timeoutMs / 1000)} s ` +
          `(it holds advisory lock ${PRISMA_MIGRATE_LOCK_KEY}). Wait for it to finish, or find it in pg_locks.`,
      );
    }
    await systemClock.sleep(100, signal);
  }
}

/** Human summary for the CLI and the logs. */
export function describeStatus(status: MigrationStatus): string {
  const lines = [`${status.applied.length} of ${status.known.length} migrations applied`];
  if (status.pending.length) lines.push(`pending: ${status.pending.join(', ')}`);
  if (status.failed.length) lines.push(`failed (needs resolving): ${status.failed.join(', ')}`);
  if (status.modified.length) lines.push(`changed after being applied: ${status.modified.join(', ')}`);
  if (status.unknown.length) lines.push(`applied but unknown to this version: ${status.unknown.join(', ')}`);
  return lines.join('\n');
}
