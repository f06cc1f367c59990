// A PostgreSQL source's targeted read (readKeys, which deadline timers rely on) agrees with
// its full snapshot for every name a table may hold: plain, with control characters and
// backslashes, 10 kB long (matched by its head-and-digest form, not in SQL), a row gone since,
// a table that does not exist, and a key of no configured table (not covered: nothing is
// concluded of it).
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Observation } from '../../lib/domain/observe';
import { createSource } from '../../lib/sources/registry';
import type { LeaseSource } from '../../lib/sources/types';
import { createPostgresDatabase, type TestDatabase } from '../support/databases';

let db: TestDatabase & { url: string };
let sql: pg.Client;
let source: LeaseSource;

const NAMES = ['plain-digest', 'tab\there\\and\u0001ctl', 'ünïcode ✓', 'x'.repeat(10_000), "quote'\"name"];

beforeAll(async () => {
  db = await createPostgresDatabase('lh_readkeys');
  sql = new pg.Client(db.url);
  await sql.connect();
  await sql.query(`CREATE TABLE leases (name TEXT PRIMARY KEY, owner TEXT, expires_at TIMESTAMPTZ NOT NULL, token BIGINT NOT NULL DEFAULT 0)`);
  for (const [i, name] of NAMES.entries()) {
    await sql.query(`INSERT INTO leases VALUES ($1, $2, now() + interval '30 seconds', $3)`, [name, `holder-${i}`, i + 1]);
  }
  await sql.query(`INSERT INTO leases VALUES ('gone-soon', 'h', now() + interval '30 seconds', 9)`);
  source = createSource({ name: 'pg', backend: 'postgres', url: db.url, tables: [{ table: 'leases', format: 'leasehold' }, { table: 'missing_table', format: 'leasehold' }], advisoryLocks: false }, 1_000);
});
afterAll(async () => {
  await source.close();
  await sql.end();
  await db.drop();
});

const byKey = (observations: Observation[]) => new Map(observations.map((o) => [o.key, o]));

describe('PostgreSQL readKeys', () => {
  it('reads exactly the named leases, each as the snapshot sees it, whatever its name', async () => {
    const snapshot = byKey((await source.snapshot(AbortSignal.timeout(10_000))).observations);
    const keys = [...snapshot.keys()].filter((key) => key !== 'leases/gone-soon');
    expect(keys).toHaveLength(NAMES.length);
    // One key at a time (the SQL filter), and all together (the long one makes it read the table whole).
    for (const key of keys) {
      const { covered, observations } = await source.readKeys!([key], AbortSignal.timeout(10_000));
      expect(covered).toEqual([key]);
      expect(observations).toHaveLength(1);
      expect(observations[0]).toMatchObject({ key, holder: snapshot.get(key)!.holder, token: snapshot.get(key)!.token });
    }
    const all = await source.readKeys!(keys, AbortSignal.timeout(10_000));
    expect(new Set(all.covered)).toEqual(new Set(keys));
    expect(new Set(all.observations.map((o) => o.key))).toEqual(new Set(keys));
  });

  it('covers a row that is gone (so it is known gone), and not a key of no table or of an unreadable table', async () => {
    await sql.query(`DELETE FROM leases WHERE name = 'gone-soon'`);
    const { covered, observations } = await source.readKeys!(['leases/gone-soon', 'elsewhere/x', 'missing_table/y'], AbortSignal.timeout(10_000));
    expect(covered).toEqual(['leases/gone-soon']);
    expect(observations).toEqual([]);
  });
});
