// A PostgreSQL source's polls read only the rows changed since the last read
// (lib/sources/postgres/delta.ts). Whatever happens to the tables (inserts, renewals, a new
// owner, deletes, expiries passing unseen, rows with no name or hostile values, a transaction
// that was in progress during a read and commits after it), each poll's picture is the one a
// full read made at the same moment gives; and a poll after which nothing was deleted reads
// only the changed rows.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PgPoolLike } from '../../lib/db/pg-like';
import type { Observation } from '../../lib/domain/observe';
import { createPostgresSource } from '../../lib/sources/postgres';
import type { PostgresSourceConfig } from '../../lib/sources/postgres/config';
import type { LeaseSource, PollResult } from '../../lib/sources/types';
import { createPostgresDatabase, type TestDatabase } from '../support/databases';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const signal = () => AbortSignal.timeout(10_000);

/** The pool of the source under test, noting which kind of statement each query was. */
function notingPool(url: string, seen: string[]): PgPoolLike {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  const wrapped = new WeakSet<object>();
  const note = (text: unknown) => {
    const sql = String(typeof text === 'object' && text !== null ? (text as { text: string }).text : text);
    if (sql.includes('LEFT JOIN (SELECT')) seen.push('changed rows');
    else if (/FROM "[a-z0-9_]+"\s*$/.test(sql.trim())) seen.push('whole table');
  };
  return {
    connect: async () => {
      const client = await pool.connect();
      if (wrapped.has(client)) return client as never; // the pool hands the same client out again
      wrapped.add(client);
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      return Object.assign(client, { query: (...args: unknown[]) => (note(args[0]), query(...args)) }) as never;
    },
    query: ((...args: unknown[]) => (note(args[0]), (pool.query as (...a: unknown[]) => unknown)(...args))) as never,
    end: () => pool.end(),
    on: (event: string, listener: (...args: unknown[]) => void) => pool.on(event as 'error', listener),
  } as PgPoolLike;
}

/**
 * What the collector would know after a poll: a full read replaces the picture; a partial
 * one replaces the leases it covers (a covered key without an observation is gone), and the
 * rest of the tables it speaks for were read unchanged.
 */
function applyPoll(picture: Map<string, Observation>, polled: PollResult) {
  if (polled.kind === 'full') {
    picture.clear();
    for (const o of polled.observations) picture.set(o.key, o);
    return;
  }
  const found = new Map(polled.observations.map((o) => [o.key, o]));
  for (const key of polled.covered) {
    if (found.has(key)) picture.set(key, found.get(key)!);
    else picture.delete(key);
  }
}

/**
 * The picture against a full read made right after: the same leases, each with the same
 * holder, token, state and detail; the same side of its expiry; and, for what the poll read,
 * the same remaining time (give or take the milliseconds between the two reads).
 */
function expectSamePicture(picture: Map<string, Observation>, covered: Set<string>, full: Observation[]) {
  const b = new Map(full.map((o) => [o.key, o]));
  expect([...picture.keys()].sort()).toEqual([...b.keys()].sort());
  for (const [key, o] of picture) {
    const other = b.get(key)!;
    expect({ ...o, remainingMs: null }, key).toEqual({ ...other, remainingMs: null });
    if (o.remainingMs === null || other.remainingMs === null) expect(o.remainingMs, key).toBe(other.remainingMs);
    else {
      expect(o.remainingMs <= 0, `${key}: ${o.remainingMs} ms left, a full read says ${other.remainingMs}`).toBe(other.remainingMs <= 0);
      if (covered.has(key)) expect(Math.abs(o.remainingMs - other.remainingMs), `${key}: ${o.remainingMs} ms left, a full read says ${other.remainingMs}`).toBeLessThan(250);
    }
  }
}

describe('postgres: a poll reads only what changed, and gives the picture a full read gives', () => {
  let db: TestDatabase & { url: string };
  let sql: pg.Client;
  let source: LeaseSource;
  let fresh: LeaseSource;
  const seen: string[] = [];
  const picture = new Map<string, Observation>();
  const leases = `lh_delta_${randomBytes(3).toString('hex')}`;
  const shedlock = `sl_delta_${randomBytes(3).toString('hex')}`;

  beforeAll(async () => {
    db = await createPostgresDatabase('lh_delta');
    sql = new pg.Client(db.url);
    await sql.connect();
    // Text columns, so that hostile values can be stored; no primary key, so that a NULL name can be.
    await sql.query(`CREATE TABLE ${leases} (name text, owner text, expires_at timestamptz, token text)`);
    await sql.query(`CREATE TABLE ${shedlock} (name varchar(64) PRIMARY KEY, lock_until timestamp NOT NULL, locked_at timestamp NOT NULL, locked_by varchar(255) NOT NULL)`);
    await sql.query(`INSERT INTO ${leases} SELECT 'job-' || i, 'worker-' || (i % 7), now() + interval '30 seconds', i::text FROM generate_series(1, 300) i`);
    await sql.query(`INSERT INTO ${shedlock} SELECT 'task-' || i, timezone('utc', now()) + interval '1 minute', timezone('utc', now()), 'host-' || i FROM generate_series(1, 50) i`);
    const config: PostgresSourceConfig = { name: 'pg', backend: 'postgres', url: db.url, tables: [{ table: leases, format: 'leasehold' }, { table: shedlock, format: 'shedlock' }], advisoryLocks: true };
    source = createPostgresSource(config, 1_000, notingPool(db.url, seen));
    fresh = createPostgresSource(config, 1_000);
    applyPoll(picture, { kind: 'full', ...(await source.snapshot(signal())) });
  });

  afterAll(async () => {
    await source?.close();
    await fresh?.close();
    await sql?.end();
    await db?.drop();
  });

  /** One poll of the source under test, against a full read by another source right after; which statements the poll made. */
  async function pollAndCompare() {
    seen.length = 0;
    const polled = await source.poll!(signal());
    const statements = [...seen];
    const full = await fresh.snapshot(signal());
    applyPoll(picture, polled);
    expect(polled.kind).toBe(statements.includes('whole table') ? 'full' : 'partial');
    if (polled.kind === 'partial') expect(polled.unchangedUnder).toEqual([`${leases}/`, `${shedlock}/`]);
    expectSamePicture(picture, new Set(polled.kind === 'full' ? picture.keys() : polled.covered), full.observations);
    expect(polled.status).toEqual(full.status);
    return statements;
  }

  it('renewals, a new owner, inserts and hostile values: only the changed rows are read', async () => {
    expect(await pollAndCompare()).toEqual(['changed rows', 'changed rows']);
    await sql.query(`UPDATE ${leases} SET expires_at = now() + interval '30 seconds' WHERE name IN ('job-1', 'job-2', 'job-3')`);
    await sql.query(`UPDATE ${leases} SET owner = 'worker-99', token = '1000' WHERE name = 'job-4'`);
    await sql.query(`UPDATE ${shedlock} SET lock_until = timezone('utc', now()) WHERE name = 'task-1'`);
    await sql.query(`INSERT INTO ${leases} VALUES ('job-new', 'w', now() + interval '5 seconds', '7'), ('bad-token', 'w', now() + interval '5 seconds', 'abc'),
                     ('forever', 'w', 'infinity', '1'), ('no-expiry', 'w', NULL, '2'), (repeat('long', 5000), repeat('o', 100000), now() + interval '9 seconds', '3'), (NULL, 'nameless', now(), '4')`);
    expect(await pollAndCompare()).toEqual(['changed rows', 'changed rows']);
    // Nothing changed: still the same picture, its remaining times counted down on the server's clock.
    await sleep(400);
    expect(await pollAndCompare()).toEqual(['changed rows', 'changed rows']);
  });

  it('an expiry that passes with no write is seen at the next poll', async () => {
    await sql.query(`INSERT INTO ${leases} VALUES ('short', 'w', now() + interval '300 milliseconds', '1')`);
    expect(await pollAndCompare()).toEqual(['changed rows', 'changed rows']);
    await sleep(600);
    const statements = await pollAndCompare();
    expect(statements).toEqual(['changed rows', 'changed rows']);
    // Read again as its expiry passed (not written since), and so seen expired.
    expect(picture.get(`${leases}/short`)?.remainingMs).toBeLessThanOrEqual(0);
  });

  it('a transaction in progress during a poll is seen once it commits', async () => {
    const writer = new pg.Client(db.url);
    await writer.connect();
    try {
      await writer.query('BEGIN');
      await writer.query(`UPDATE ${leases} SET owner = 'late-writer', token = '2000' WHERE name = 'job-10'`);
      // Another transaction commits meanwhile: the snapshot's xmin stays at the open one.
      await sql.query(`UPDATE ${leases} SET owner = 'quick' WHERE name = 'job-11'`);
      expect(await pollAndCompare()).toEqual(['changed rows', 'changed rows']);
      await writer.query('COMMIT');
      expect(await pollAndCompare()).toEqual(['changed rows', 'changed rows']);
    } finally {
      await writer.end();
    }
  });

  it('an advisory lock taken and let go between polls is seen, then seen gone', async () => {
    const session = new pg.Client(db.url);
    await session.connect();
    try {
      await session.query('SELECT pg_advisory_lock(4242)');
      await pollAndCompare();
      expect([...picture.keys()].filter((key) => key.startsWith('advisory/'))).toHaveLength(1);
      await session.query('SELECT pg_advisory_unlock(4242)');
      await pollAndCompare();
      expect([...picture.keys()].filter((key) => key.startsWith('advisory/'))).toEqual([]);
      // Taken before a full read, let go before the next poll: still seen gone.
      await session.query('SELECT pg_advisory_lock(4243)');
      applyPoll(picture, { kind: 'full', ...(await source.snapshot(signal())) });
      expect([...picture.keys()].filter((key) => key.startsWith('advisory/'))).toHaveLength(1);
      await session.query('SELECT pg_advisory_unlock(4243)');
      await pollAndCompare();
      expect([...picture.keys()].filter((key) => key.startsWith('advisory/'))).toEqual([]);
    } finally {
      await session.end();
    }
  });

  it('a deleted row makes the poll read the table whole, then polls read changes again', async () => {
    await sql.query(`DELETE FROM ${leases} WHERE name = 'job-5'`);
    await sql.query(`INSERT INTO ${leases} VALUES ('job-5b', 'w', now() + interval '30 seconds', '5')`); // the count alone would not tell
    expect(await pollAndCompare()).toEqual(['changed rows', 'whole table', 'whole table']);
    await sql.query(`DELETE FROM ${shedlock} WHERE name = 'task-2'`);
    expect(await pollAndCompare()).toEqual(['changed rows', 'changed rows', 'whole table', 'whole table']);
    expect(await pollAndCompare()).toEqual(['changed rows', 'changed rows']);
  });

  it('a table that cannot be read makes the poll a full read that says so; the other parts are still read', async () => {
    await sql.query(`ALTER TABLE ${shedlock} RENAME TO ${shedlock}_away`);
    try {
      seen.length = 0;
      const polled = await source.poll!(signal());
      expect(polled.kind).toBe('full');
      expect((polled as { unread?: { prefix: string }[] }).unread?.map((u) => u.prefix)).toEqual([`${shedlock}/`]);
      expect((polled as { observations: Observation[] }).observations.some((o) => o.key.startsWith(`${leases}/`))).toBe(true);
      // While it cannot be read, every poll is a full read.
      seen.length = 0;
      await source.poll!(signal());
      expect(seen).toContain('whole table');
    } finally {
      await sql.query(`ALTER TABLE ${shedlock}_away RENAME TO ${shedlock}`);
    }
    expect(await pollAndCompare()).toEqual(['whole table', 'whole table']); // a full read again, with both tables
    expect(await pollAndCompare()).toEqual(['changed rows', 'changed rows']);
  });

  it('a view (no xmin to go by) is read whole at every poll, and still seen right', async () => {
    const view = `${leases}_view`;
    await sql.query(`CREATE VIEW ${view} AS SELECT * FROM ${leases}`);
    const statements: string[] = [];
    const config: PostgresSourceConfig = { name: 'pg-view', backend: 'postgres', url: db.url, tables: [{ table: view, format: 'leasehold' }], advisoryLocks: false };
    const viewSource = createPostgresSource(config, 1_000, notingPool(db.url, statements));
    const viewFresh = createPostgresSource(config, 1_000);
    try {
      await viewSource.snapshot(signal());
      for (let i = 0; i < 3; i++) {
        await sql.query(`UPDATE ${leases} SET owner = 'view-${i}' WHERE name = 'job-20'`);
        statements.length = 0;
        const polled = await viewSource.poll!(signal());
        expect(statements.at(-1)).toBe('whole table');
        expect(polled.kind).toBe('full');
        const viewPicture = new Map<string, Observation>();
        applyPoll(viewPicture, polled);
        expectSamePicture(viewPicture, new Set(viewPicture.keys()), (await viewFresh.snapshot(signal())).observations);
      }
    } finally {
      await viewSource.close();
      await viewFresh.close();
    }
  });
});
