// The migration runner, on a real PostgreSQL and on PGlite: what it applies, what it
// records (exactly what `prisma migrate deploy` records), and what it refuses.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, cpSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  MigrationError,
  PRISMA_MIGRATE_LOCK_KEY,
  migrate,
  migrationStatus,
  readMigrations,
} from '../../lib/db/migrate';
import type { SqlSession } from '../../lib/db/sql';
import { STORE_KINDS, createPostgresDatabase, type TestDatabase } from '../support/databases';

const shipped = readMigrations(path.resolve('prisma/migrations'));
const scratch = mkdtempSync(path.join(os.tmpdir(), 'leasehold-migrations-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A migrations folder: the shipped ones plus extra folders. */
function folderWith(extra: Record<string, string>): string {
  const dir = mkdtempSync(path.join(scratch, 'm-'));
  cpSync(path.resolve('prisma/migrations'), dir, { recursive: true });
  for (const [name, sql] of Object.entries(extra)) {
    mkdirSync(path.join(dir, name));
    writeFileSync(path.join(dir, name, 'migration.sql'), sql);
  }
  return dir;
}

type Row = {
  id: string;
  checksum: string;
  finished_at: Date | null;
  migration_name: string;
  logs: string | null;
  rolled_back_at: Date | null;
  started_at: Date;
  applied_steps_count: number;
};
const rows = (sql: SqlSession) => sql.query<Row>('SELECT * FROM "_prisma_migrations" ORDER BY migration_name');
const tableExists = async (sql: SqlSession, name: string) =>
  (await sql.query<{ ok: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS ok`, [`"${name}"`]))[0]!.ok;

describe.each(STORE_KINDS)('migrations on $kind', ({ create }) => {
  let db: TestDatabase;
  let sql: SqlSession;
  beforeEach(async () => {
    db = await create();
    sql = await db.connect();
  });
  afterEach(async () => {
    await sql.close();
    await db.drop();
  });

  it('applies every migration once and records it as prisma migrate deploy does', async () => {
    const result = await migrate(sql, { migrations: shipped });
    expect(result.applied).toEqual(shipped.map((m) => m.name));
    expect(result.status).toMatchObject({ pending: [], failed: [], modified: [], unknown: [] });

    const recorded = await rows(sql);
    expect(recorded.map((r) => r.migration_name)).toEqual(shipped.map((m) => m.name));
    for (const [index, row] of recorded.entries()) {
      expect(row.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(row.checksum).toBe(shipped[index]!.checksum);
      expect(row.finished_at).toBeInstanceOf(Date);
      expect(row.finished_at!.getTime()).toBeGreaterThanOrEqual(row.started_at.getTime());
      expect(row.logs).toBeNull();
      expect(row.rolled_back_at).toBeNull();
      expect(row.applied_steps_count).toBe(1);
    }
    // The bookkeeping table has Prisma's exact columns and types.
    const columns = await sql.query<{ column_name: string; data_type: string; is_nullable: string }>(
      `SELECT column_name, data_type, is_nullable FROM information_schema.columns
        WHERE table_name = '_prisma_migrations' ORDER BY ordinal_position`,
    );
    expect(columns).toEqual([
      { column_name: 'id', data_type: 'character varying', is_nullable: 'NO' },
      { column_name: 'checksum', data_type: 'character varying', is_nullable: 'NO' },
      { column_name: 'finished_at', data_type: 'timestamp with time zone', is_nullable: 'YES' },
      { column_name: 'migration_name', data_type: 'character varying', is_nullable: 'NO' },
      { column_name: 'logs', data_type: 'text', is_nullable: 'YES' },
      { column_name: 'rolled_back_at', data_type: 'timestamp with time zone', is_nullable: 'YES' },
      { column_name: 'started_at', data_type: 'timestamp with time zone', is_nullable: 'NO' },
      { column_name: 'applied_steps_count', data_type: 'integer', is_nullable: 'NO' },
    ]);
    expect(await tableExists(sql, 'AuditEntry')).toBe(true);
  });

  it('a second run applies nothing and changes no record', async () => {
    await migrate(sql, { migrations: shipped });
    const before = await rows(sql);
    const again = await migrate(sql, { migrations: shipped });
    expect(again.applied).toEqual([]);
    expect(await rows(sql)).toEqual(before);
  });

  it('a failing migration is rolled back whole, leaves no record, and can be fixed and re-run', async () => {
    const broken = '29991231000000_broken';
    const dir = folderWith({ [broken]: 'CREATE TABLE "HalfDone" (id int);\nSELECT * FROM "no_such_table";\n' });
    const error = await migrate(sql, { migrations: readMigrations(dir) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MigrationError);
    expect(error).toMatchObject({ code: 'migration_failed', migration: broken });
    expect((error as Error).message).toMatch(/Migration 29991231000000_broken failed and was rolled back: .*no_such_table/);
    // The migrations before it stay applied; nothing of the broken one is left.
    expect((await rows(sql)).map((r) => r.migration_name)).toEqual(shipped.map((m) => m.name));
    expect(await tableExists(sql, 'HalfDone')).toBe(false);

    writeFileSync(path.join(dir, broken, 'migration.sql'), 'CREATE TABLE "HalfDone" (id int);\n');
    const fixed = await migrate(sql, { migrations: readMigrations(dir) });
    expect(fixed.applied).toEqual([broken]);
    expect(await tableExists(sql, 'HalfDone')).toBe(true);
  });

  it('refuses to run past a migration Prisma recorded as failed', async () => {
    await migrate(sql, { migrations: shipped });
    const next = '29991231000000_next';
    await sql.query(
      `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, logs, started_at, applied_steps_count)
       VALUES ('00000000-0000-0000-0000-000000000001', $1, $2, 'Database error', now(), 0)`,
      ['0'.repeat(64), next],
    );
    const dir = folderWith({ [next]: 'CREATE TABLE "Next" (id int);' });
    const status = await migrationStatus(sql, readMigrations(dir));
    expect(status.failed).toEqual([next]);
    await expect(migrate(sql, { migrations: readMigrations(dir) })).rejects.toMatchObject({ code: 'failed_migration', migration: next });
    expect(await tableExists(sql, 'Next')).toBe(false);
  });

  it('reports a migration changed after it was applied, and does not apply it again', async () => {
    await migrate(sql, { migrations: shipped });
    const changed = shipped.map((m, i) => (i === 0 ? { ...m, sql: `${m.sql}\n-- edited`, checksum: 'f'.repeat(64) } : m));
    const log: string[] = [];
    const result = await migrate(sql, { migrations: changed, log: (line) => log.push(line) });
    expect(result.applied).toEqual([]);
    expect(result.status.modified).toEqual([shipped[0]!.name]);
    expect(log.join('\n')).toMatch(/was changed after it was applied/);
  });

  it('a database newer than this code reports the migrations it does not know', async () => {
    const future = '29991231000000_future';
    await migrate(sql, { migrations: readMigrations(folderWith({ [future]: 'SELECT 1;' })) });
    const status = await migrationStatus(sql, shipped);
    expect(status.unknown).toEqual([future]);
    expect(status.pending).toEqual([]);
  });

  it('records the release that migrated it, once per release and migration', async () => {
    await migrate(sql, { migrations: shipped, release: '1.2.3' });
    await migrate(sql, { migrations: shipped, release: '1.2.3' });
    const recorded = await sql.query<{ version: string; lastMigration: string }>('SELECT "version", "lastMigration" FROM "StoreRelease"');
    expect(recorded).toEqual([{ version: '1.2.3', lastMigration: shipped.at(-1)!.name }]);
  });

  describe('a store a newer release migrated', () => {
    const future = '29991231000000_future';
    const ahead = () => migrate(sql, { migrations: readMigrations(folderWith({ [future]: 'CREATE TABLE "Future" (id int);' })), release: '9.9.9' });

    it('refuses this release, naming the release to run, and changes nothing', async () => {
      await ahead();
      const before = await rows(sql);
      const error = await migrate(sql, { migrations: shipped, release: '1.0.0' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MigrationError);
      expect(error).toMatchObject({ code: 'store_ahead', migration: future });
      expect((error as Error).message).toMatch(
        /^This store is ahead of Leasehold 1\.0\.0: it has a migration this release does not ship \(29991231000000_future\); it was migrated by Leasehold 9\.9\.9 on \d{4}-\d\d-\d\d: run Leasehold 9\.9\.9 or later against it \(or point this one at another store\)\. Nothing was changed\.$/,
      );
      expect(await rows(sql)).toEqual(before);
      expect(await sql.query('SELECT "version" FROM "StoreRelease" ORDER BY "version"')).toEqual([{ version: '9.9.9' }]);
    });

    it('another build of the same release is told to run that build', async () => {
      await ahead();
      await expect(migrate(sql, { migrations: shipped, release: '9.9.9' })).rejects.toThrow(/migrated by another build of Leasehold 9\.9\.9 on .*: run that build, or a later release/);
    });

    it('a store whose newer release did not record itself names the migration to look for', async () => {
      await ahead();
      await sql.exec('DELETE FROM "StoreRelease"');
      await expect(migrate(sql, { migrations: shipped, release: '1.0.0' })).rejects.toThrow(/did not record itself: run the Leasehold release that ships 29991231000000_future, or a later one/);
    });
  });
});

describe('migrations on postgres with several processes', () => {
  it('two runners at once apply each migration exactly once', async () => {
    const db = await createPostgresDatabase();
    const sessions = await Promise.all([db.connect(), db.connect(), db.connect()]);
    try {
      const results = await Promise.all(sessions.map((s) => migrate(s, { migrations: shipped })));
      expect(results.flatMap((r) => r.applied).sort()).toEqual(shipped.map((m) => m.name).sort());
      const counts = await sessions[0]!.query<{ migration_name: string; n: string }>(
        'SELECT migration_name, count(*) AS n FROM "_prisma_migrations" GROUP BY migration_name',
      );
      expect(counts.every((c) => Number(c.n) === 1)).toBe(true);
    } finally {
      await Promise.all(sessions.map((s) => s.close()));
      await db.drop();
    }
  });

  it('gives up with lock_timeout while another process holds the migrate lock', async () => {
    const db = await createPostgresDatabase();
    const holder = await db.connect();
    const runner = await db.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1)', [PRISMA_MIGRATE_LOCK_KEY]);
      const started = Date.now();
      const error = await migrate(runner, { migrations: shipped, lockTimeoutMs: 500 }).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'lock_timeout' });
      expect(Date.now() - started).toBeLessThan(10_000);
      await holder.query('SELECT pg_advisory_unlock($1)', [PRISMA_MIGRATE_LOCK_KEY]);
      expect((await migrate(runner, { migrations: shipped })).applied).toHaveLength(shipped.length);
    } finally {
      await holder.close();
      await runner.close();
      await db.drop();
    }
  });

  it('stops waiting for the lock when its signal aborts', async () => {
    const db = await createPostgresDatabase();
    const holder = await db.connect();
    const runner = await db.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1)', [PRISMA_MIGRATE_LOCK_KEY]);
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 200);
      await expect(migrate(runner, { migrations: shipped, signal: controller.signal })).rejects.toMatchObject({ code: 'aborted' });
    } finally {
      await holder.close();
      await runner.close();
      await db.drop();
    }
  });
});
