// Issue 13: the observer never freezes, never invents, and costs little while sources fail,
// whatever the backends hold. Each case was reproduced against the code before the fix (the
// comment says how it failed there); all run on real servers and a PostgreSQL store.
import { randomBytes } from 'node:crypto';
import { Etcd3 } from 'etcd3';
import Redis from 'ioredis';
import pg from 'pg';
import Redlock from 'redlock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Collector } from '../../lib/collector';
import type { ReadReport } from '../../lib/collector/observe-source';
import type { SourceConfig } from '../../lib/config';
import { openStore, type Store } from '../../lib/db/store';
import { createSource } from '../../lib/sources/registry';
import { testCollector } from '../support/collector';
import { createPostgresDatabase, type TestDatabase } from '../support/databases';
import { startRedisServer, type RedisServer } from '../support/redis-servers';
import { testServices } from '../support/services';
import { startSilentListener, type SilentListener } from '../support/silent-listener';

const services = testServices();
const unique = () => randomBytes(4).toString('hex');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const DAY_MS = 86_400_000;

let storeDb: TestDatabase & { url: string };
let observedDb: TestDatabase & { url: string };
let store: Store;
let observed: pg.Client;
const collectors: Collector[] = [];
const redis = new Redis(services.redisUrl);
const etcd = new Etcd3({ hosts: services.etcdEndpoints });

beforeAll(async () => {
  [storeDb, observedDb] = await Promise.all([createPostgresDatabase('lh_hostile_store'), createPostgresDatabase('lh_hostile')]);
  store = await openStore({ kind: 'postgres', url: storeDb.url });
  observed = new pg.Client(observedDb.url);
  await observed.connect();
});
afterEach(async () => {
  await Promise.all(collectors.splice(0).map((c) => c.stop()));
});
afterAll(async () => {
  await observed.end();
  await store.close();
  await Promise.all([storeDb.drop(), observedDb.drop()]);
  redis.disconnect();
  etcd.close();
});

function collect(sources: SourceConfig[], options: { pollMs?: number; onRead?: (read: ReadReport) => void; log?: (line: string) => void } = {}) {
  const collector = testCollector(store, sources, options);
  collectors.push(collector);
  return collector;
}
const lease = (id: string) => store.prisma.lease.findUnique({ where: { id } });
const source = (name: string) => store.prisma.source.findUnique({ where: { name } });
const eventTypes = async (leaseId: string) => (await store.prisma.leaseEvent.findMany({ where: { leaseId }, orderBy: { seq: 'asc' } })).map((e) => e.type);
const leaseIdsOf = async (name: string) => (await store.prisma.lease.findMany({ where: { sourceName: name }, select: { id: true } })).map((l) => l.id).sort();

describe('1. numbers beyond what an INTEGER column holds', () => {
  // Before: ttlMs went into an int4 column; the write failed and was retried forever while the
  // source stayed up, and no other lease of the source was ever written again.
  it('redis: a lock with a TTL of 30 days is stored exactly, and a lock taken after it still appears', async () => {
    const prefix = `long${unique()}:`;
    collect([{ name: 'r-long', backend: 'redis', urls: [services.redisUrl], match: [`${prefix}*`], fenceSuffix: ':fence', keyspaceNotifications: 'off' }]);
    await redis.set(`${prefix}month`, 'holder-a', 'PX', 30 * DAY_MS);
    await redis.set(`${prefix}forever-ish`, 'holder-b', 'PX', 2 ** 62);
    await expect.poll(async () => (await lease(`r-long/${prefix}month`))?.ttlMs, { timeout: 10_000 }).toBeGreaterThan(29 * DAY_MS);
    await redis.set(`${prefix}later`, 'holder-c', 'PX', 60_000);
    await expect.poll(async () => (await lease(`r-long/${prefix}later`))?.holder, { timeout: 10_000 }).toBe('holder-c');
    expect(await lease(`r-long/${prefix}forever-ish`)).toMatchObject({ state: 'held', expiresAt: null });
    expect((await lease(`r-long/${prefix}forever-ish`))?.detail).toMatchObject({ clamped: expect.stringMatching(/27,000 years/) });
    expect((await source('r-long'))?.status).toBe('up');
  });

  it('postgres: 40-day and 4000 BC expiries, a token beyond 2^63, a ShedLock lock of 30 days', async () => {
    const table = `long_${unique()}`;
    await observed.query(`CREATE TABLE ${table} (name text PRIMARY KEY, owner text, expires_at timestamptz, token numeric)`);
    await observed.query(`CREATE TABLE ${table}_shed (name text PRIMARY KEY, lock_until timestamp, locked_at timestamp, locked_by text)`);
    await observed.query(
      `INSERT INTO ${table} VALUES ('forty', 'w1', now() + interval '40 days', 1), ('bc', 'w2', '4000-01-01 BC', 2),
                                   ('big', 'w3', now() + interval '1 minute', 9223372036854775809)`,
    );
    await observed.query(`INSERT INTO ${table}_shed VALUES ('month', timezone('utc', now()) + interval '30 days', timezone('utc', now()), 'host-1')`);
    collect([{ name: 'p-long', backend: 'postgres', url: observedDb.url, tables: [{ table, format: 'leasehold' }, { table: `${table}_shed`, format: 'shedlock' }], advisoryLocks: false }]);
    await expect.poll(async () => (await leaseIdsOf('p-long')).length, { timeout: 10_000 }).toBe(4);
    expect(await lease(`p-long/${table}/forty`)).toMatchObject({ state: 'held', holder: 'w1' });
    expect(await lease(`p-long/${table}/bc`)).toMatchObject({ state: 'expired', expiresAt: new Date('0001-01-01T00:00:00.000Z') });
    expect((await lease(`p-long/${table}/big`))?.token?.toFixed()).toBe('9223372036854775809');
    expect(Number((await lease(`p-long/${table}_shed/month`))?.ttlMs)).toBe(30 * DAY_MS);
    await observed.query(`INSERT INTO ${table} VALUES ('later', 'w4', now() + interval '1 minute', 5)`);
    await expect.poll(async () => (await lease(`p-long/${table}/later`))?.holder, { timeout: 10_000 }).toBe('w4');
    expect((await source('p-long'))?.status).toBe('up');
  });

  it('etcd: a key on a lease of 30 days is stored exactly, and a key put after it still appears', async () => {
    const prefix = `long${unique()}/`;
    collect([{ name: 'e-long', backend: 'etcd', endpoints: services.etcdEndpoints, prefixes: [prefix] }]);
    const month = etcd.lease(30 * 86_400, { autoKeepAlive: false });
    await month.put(`${prefix}month`).value('holder-a');
    await expect.poll(async () => Number((await lease(`e-long/${prefix}month`))?.ttlMs), { timeout: 10_000 }).toBe(30 * DAY_MS);
    const later = etcd.lease(30, { autoKeepAlive: false });
    await later.put(`${prefix}later`).value('holder-b');
    await expect.poll(async () => (await lease(`e-long/${prefix}later`))?.holder, { timeout: 10_000 }).toBe('holder-b');
    await Promise.all([month.revoke(), later.revoke()]);
  });
});

describe('1. a lease the store refuses stops no other', () => {
  // Before: one failed row failed the whole batch, which was retried forever: no other lease of
  // the source was written again, and the source stayed `up` as if all was well.
  it('the other leases are written, and the source names the lease the store refused', async () => {
    const prefix = `refuse${unique()}:`;
    // A real PostgreSQL refusing one row, as a constraint or a full disk might.
    await store.withSql((sql) =>
      sql.exec(`CREATE OR REPLACE FUNCTION refuse_poison() RETURNS trigger AS $$
                BEGIN IF NEW.key LIKE '%:poison' THEN RAISE EXCEPTION 'refused by a test trigger'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql;
                CREATE TRIGGER refuse_poison BEFORE INSERT OR UPDATE ON "Lease" FOR EACH ROW EXECUTE FUNCTION refuse_poison();`),
    );
    try {
      collect([{ name: 'r-refuse', backend: 'redis', urls: [services.redisUrl], match: [`${prefix}*`], fenceSuffix: ':fence', keyspaceNotifications: 'off' }]);
      await redis.set(`${prefix}poison`, 'holder-p', 'PX', 60_000);
      await redis.set(`${prefix}fine`, 'holder-f', 'PX', 60_000);
      await expect.poll(async () => (await lease(`r-refuse/${prefix}fine`))?.holder, { timeout: 10_000 }).toBe('holder-f');
      await redis.set(`${prefix}later`, 'holder-l', 'PX', 60_000);
      await expect.poll(async () => (await lease(`r-refuse/${prefix}later`))?.holder, { timeout: 10_000 }).toBe('holder-l');
      expect(await lease(`r-refuse/${prefix}poison`)).toBeNull();
      await expect
        .poll(async () => (await source('r-refuse'))?.lastError, { timeout: 10_000 })
        .toMatch(new RegExp(`the store refused 1 lease of this source \\(r-refuse/${prefix}poison: .*refused by a test trigger`));
      expect((await source('r-refuse'))?.status).toBe('up');
    } finally {
      await store.withSql((sql) => sql.exec(`DROP TRIGGER refuse_poison ON "Lease"; DROP FUNCTION refuse_poison()`));
    }
    // Once the store takes it, the source says nothing more.
    await expect.poll(async () => (await lease(`r-refuse/${prefix}poison`))?.holder, { timeout: 10_000 }).toBe('holder-p');
    await expect.poll(async () => (await source('r-refuse'))?.lastError, { timeout: 10_000 }).toBeNull();
  });
});

describe('2. a lease is its exact key, never a display text', () => {
  // Before: keys were cut to 200 characters and that text was the lease's identity: two keys
  // sharing their first 199 characters were one lease, and each renewal "took it over".
  const long = 'k'.repeat(250);

  it('redis: two keys that differ after 250 characters are two leases, renewed without takeovers', async () => {
    const prefix = `same${unique()}:`;
    collect([{ name: 'r-same', backend: 'redis', urls: [services.redisUrl], match: [`${prefix}*`], fenceSuffix: ':fence', keyspaceNotifications: 'off' }]);
    const [a, b] = [`${prefix}${long}-a`, `${prefix}${long}-b`];
    await redis.set(a, 'holder-a', 'PX', 5_000);
    await redis.set(b, 'holder-b', 'PX', 5_000);
    for (let i = 0; i < 5; i++) {
      await sleep(400);
      await redis.pexpire(a, 5_000);
      await redis.pexpire(b, 5_000);
    }
    expect(await leaseIdsOf('r-same')).toEqual([`r-same/${a}`, `r-same/${b}`]);
    expect(await eventTypes(`r-same/${a}`)).toEqual(['acquired']);
    expect(await eventTypes(`r-same/${b}`)).toEqual(['acquired']);
  });

  it('postgres: two names that differ after 250 characters are two leases', async () => {
    const table = `same_${unique()}`;
    await observed.query(`CREATE TABLE ${table} (name text PRIMARY KEY, owner text, expires_at timestamptz, token bigint)`);
    await observed.query(`INSERT INTO ${table} VALUES ($1, 'w1', now() + interval '5 seconds', 1), ($2, 'w2', now() + interval '5 seconds', 1)`, [`${long}-a`, `${long}-b`]);
    collect([{ name: 'p-same', backend: 'postgres', url: observedDb.url, tables: [{ table, format: 'leasehold' }], advisoryLocks: false }]);
    for (let i = 0; i < 5; i++) {
      await sleep(400);
      await observed.query(`UPDATE ${table} SET expires_at = now() + interval '5 seconds'`);
    }
    expect(await leaseIdsOf('p-same')).toEqual([`p-same/${table}/${long}-a`, `p-same/${table}/${long}-b`]);
    expect(await eventTypes(`p-same/${table}/${long}-a`)).toEqual(['acquired']);
  });

  it('etcd: two keys that differ after 250 characters are two leases', async () => {
    const prefix = `same${unique()}/`;
    collect([{ name: 'e-same', backend: 'etcd', endpoints: services.etcdEndpoints, prefixes: [prefix] }]);
    const grant = etcd.lease(10, { autoKeepAlive: false });
    await grant.put(`${prefix}${long}-a`).value('holder-a');
    await grant.put(`${prefix}${long}-b`).value('holder-b');
    await expect.poll(() => leaseIdsOf('e-same'), { timeout: 10_000 }).toEqual([`e-same/${prefix}${long}-a`, `e-same/${prefix}${long}-b`]);
    await sleep(1_500);
    expect(await eventTypes(`e-same/${prefix}${long}-a`)).toEqual(['acquired']);
    await grant.revoke();
  });
});

describe('3. a large binary value costs what a small one does', () => {
  // Before: every read sent each 1 MB value whole and decoded it for display (~1.7 s per MB of
  // invalid UTF-8): six of them made every request take ~10 s.
  let own: RedisServer;
  beforeAll(async () => {
    own = await startRedisServer(16394);
  });
  afterAll(() => own.stop());

  it('redis sends a 1 MB value as its head, length and digest: six of them cost a few kilobytes a read', async () => {
    const client = new Redis(own.url);
    try {
      for (let i = 0; i < 6; i++) await client.set(`bin:${i}`, randomBytes(1_000_000), 'PX', 60_000);
      const reader = createSource({ name: 'r-bin', backend: 'redis', urls: [own.url], match: ['bin:*'], fenceSuffix: ':fence', keyspaceNotifications: 'off' }, 1_000);
      const sent = async () => Number(/total_net_output_bytes:(\d+)/.exec(await client.info('stats'))![1]);
      try {
        await reader.snapshot(AbortSignal.timeout(10_000)); // connects and loads the script
        const before = await sent();
        const { observations } = await reader.snapshot(AbortSignal.timeout(10_000));
        const bytes = (await sent()) - before;
        expect(observations).toHaveLength(6);
        for (const o of observations) expect(o.holder).toMatch(/…\[1000000 bytes, sha1:[0-9a-f]{32}\]$/);
        // 6 MB before; now the heads (120 bytes each), lengths, digests and the INFO reply.
        expect(bytes).toBeLessThan(20_000);
        // Two values that differ only in their last byte are two holders.
        const a = randomBytes(1_000_000);
        const b = Buffer.from(a);
        b[b.length - 1] = b[b.length - 1]! ^ 1;
        await client.set('bin:0', a, 'PX', 60_000);
        const first = (await reader.snapshot(AbortSignal.timeout(10_000))).observations.find((o) => o.key === 'bin:0')!.holder;
        await client.set('bin:0', b, 'PX', 60_000);
        const second = (await reader.snapshot(AbortSignal.timeout(10_000))).observations.find((o) => o.key === 'bin:0')!.holder;
        expect(second).not.toBe(first);
      } finally {
        await reader.close();
      }
    } finally {
      client.disconnect();
    }
  });
});

describe('4. a failing source backs off and writes its status once', () => {
  // Before: after a failure the next read skipped the poll wait: a closed port was tried
  // hundreds of times a second, and each failure was a store transaction.
  // Every write of a source's row sets its "updatedAt". (The table's statistics counted the
  // writes of every source in the store, flushed up to seconds late: earlier tests' sources
  // could land in this one's window.)
  const sourceWrittenAt = async (name: string) =>
    (await store.withSql((sql) => sql.query<{ at: Date }>(`SELECT "updatedAt" AS at FROM "Source" WHERE name = $1`, [name])))[0]?.at.getTime() ?? null;

  it('a closed port: a few attempts in 6 s (a backoff with jitter), and one write of the source row', async () => {
    const failures: ReadReport[] = [];
    collect([{ name: 'r-closed', backend: 'redis', urls: ['redis://127.0.0.1:16398'], match: ['x:*'], fenceSuffix: ':fence', keyspaceNotifications: 'off' }], {
      pollMs: 100,
      onRead: (read) => {
        if (!read.ok) failures.push(read);
      },
    });
    await expect.poll(async () => (await source('r-closed'))?.status, { timeout: 10_000 }).toBe('down');
    const writtenBefore = await sourceWrittenAt('r-closed');
    const failuresBefore = failures.length;
    await sleep(6_000);
    // Backoff from 100 ms growing (with jitter) to at most 1 s (two polls, at least 1 s:
    // lib/collector/read-lanes.ts downRetryCapMs): 6 to about 12 attempts in 6 s, not 60.
    expect(failures.length - failuresBefore).toBeLessThanOrEqual(20);
    expect(failures.length - failuresBefore).toBeGreaterThanOrEqual(1);
    // Nothing changed, so nothing was written after the row that says it is down.
    expect(await sourceWrittenAt('r-closed')).toBe(writtenBefore);
    expect(await store.prisma.sourceEvent.count({ where: { sourceName: 'r-closed' } })).toBe(1);
  });

  it('a renamed table: the observed database is not queried in a loop', async () => {
    const table = `gone_${unique()}`;
    await observed.query(`CREATE TABLE ${table} (name text PRIMARY KEY, owner text, expires_at timestamptz, token bigint)`);
    collect([{ name: 'p-gone', backend: 'postgres', url: observedDb.url, tables: [{ table, format: 'leasehold' }], advisoryLocks: false }], { pollMs: 100 });
    await expect.poll(async () => (await source('p-gone'))?.status, { timeout: 10_000 }).toBe('up');
    await observed.query(`ALTER TABLE ${table} RENAME TO ${table}_x`);
    await expect.poll(async () => (await source('p-gone'))?.status, { timeout: 10_000 }).toBe('down');
    const transactions = async () =>
      Number((await observed.query<{ n: string }>(`SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()`)).rows[0]!.n);
    await sleep(600); // pg_stat_database is updated at most every 500 ms
    const before = await transactions();
    await sleep(5_000);
    // Before: ~200 transactions a second. A backoff from 100 ms to 1 s: a handful (each read is
    // a few statements, plus this test's own queries).
    expect((await transactions()) - before).toBeLessThan(60);
  });
});

describe('7. one bad row is one unknown lease; a table that cannot be read leaves the others read', () => {
  // Before: expires_at = 'infinity' or a token of 1.5 failed the whole read, and a missing
  // table made the source down with every other table and the advisory locks.
  it('each row is judged alone, and a renamed table only makes its own leases stale', async () => {
    const table = `rows_${unique()}`;
    await observed.query(`CREATE TABLE ${table} (name text PRIMARY KEY, owner text, expires_at timestamptz, token numeric)`);
    await observed.query(`CREATE TABLE ${table}_t (name text PRIMARY KEY, owner text, expires_at timestamptz, token text)`);
    await observed.query(`CREATE TABLE ${table}_other (name text PRIMARY KEY, owner text, expires_at timestamptz, token bigint)`);
    await observed.query(
      `INSERT INTO ${table} VALUES ('good', 'w1', now() + interval '1 minute', 3), ('forever', 'w2', 'infinity', 4),
                                   ('half', 'w3', now() + interval '1 minute', 1.5), ('nulls', NULL, NULL, NULL)`,
    );
    await observed.query(`INSERT INTO ${table}_t VALUES ('abc', 'w4', now() + interval '1 minute', 'abc'), ('ok', 'w5', now() + interval '1 minute', '7')`);
    await observed.query(`INSERT INTO ${table}_other VALUES ('elsewhere', 'w6', now() + interval '1 minute', 1)`);
    const locker = new pg.Client(observedDb.url);
    await locker.connect();
    await locker.query('SELECT pg_advisory_lock(424242)');
    try {
      const tables = [
        { table, format: 'leasehold' as const },
        { table: `${table}_t`, format: 'leasehold' as const },
        { table: `${table}_other`, format: 'leasehold' as const },
      ];
      collect([{ name: 'p-rows', backend: 'postgres', url: observedDb.url, tables, advisoryLocks: true }]);
      const id = (t: string, name: string) => `p-rows/${t}/${name}`;
      await expect.poll(async () => (await lease(id(`${table}_other`, 'elsewhere')))?.state, { timeout: 10_000 }).toBe('held');
      expect(await lease(id(table, 'good'))).toMatchObject({ state: 'held', holder: 'w1' });
      expect(await lease(id(table, 'forever'))).toMatchObject({ state: 'held', holder: 'w2', expiresAt: null });
      expect(await lease(id(table, 'half'))).toMatchObject({ state: 'unknown', problem: 'the token column holds "1.5", not a whole number' });
      expect(await lease(id(table, 'nulls'))).toMatchObject({ state: 'free' });
      expect(await lease(id(`${table}_t`, 'abc'))).toMatchObject({ state: 'unknown', problem: 'the token column holds "abc", not a whole number' });
      expect(await lease(id(`${table}_t`, 'ok'))).toMatchObject({ state: 'held', holder: 'w5' });
      expect(await lease('p-rows/advisory/424242')).toMatchObject({ state: 'held' });

      // A table renamed away: its lease is stale (not released), the rest stays read, and the
      // source says which table it could not read.
      await observed.query(`ALTER TABLE ${table}_other RENAME TO ${table}_moved`);
      await expect.poll(async () => (await lease(id(`${table}_other`, 'elsewhere')))?.stale, { timeout: 10_000 }).toBe(true);
      expect(await source('p-rows')).toMatchObject({ status: 'up', lastError: expect.stringContaining(`table ${table}_other`) });
      expect(await lease(id(table, 'good'))).toMatchObject({ state: 'held', stale: false });
      await observed.query(`ALTER TABLE ${table}_moved RENAME TO ${table}_other`);
      await expect.poll(async () => (await lease(id(`${table}_other`, 'elsewhere')))?.stale, { timeout: 10_000 }).toBe(false);
      expect(await eventTypes(id(`${table}_other`, 'elsewhere'))).toEqual(['acquired']);
      expect((await source('p-rows'))?.lastError).toBeNull();
    } finally {
      await locker.end();
    }
  });

  it('a table held locked by a migration is unread after a second, and the source and its other tables stay read', async () => {
    // Before: the read waited on the lock until its 5 s deadline, and the whole source was
    // marked down with every lease of every table stale.
    const table = `locked_${unique()}`;
    await observed.query(`CREATE TABLE ${table} (name text PRIMARY KEY, owner text, expires_at timestamptz, token bigint)`);
    await observed.query(`CREATE TABLE ${table}_free (name text PRIMARY KEY, owner text, expires_at timestamptz, token bigint)`);
    await observed.query(`INSERT INTO ${table} VALUES ('a', 'w1', now() + interval '5 minutes', 1)`);
    await observed.query(`INSERT INTO ${table}_free VALUES ('b', 'w2', now() + interval '5 minutes', 1)`);
    const id = (t: string, name: string) => `p-locked/${t}/${name}`;
    collect([
      {
        name: 'p-locked',
        backend: 'postgres',
        url: observedDb.url,
        tables: [
          { table, format: 'leasehold' },
          { table: `${table}_free`, format: 'leasehold' },
        ],
        advisoryLocks: false,
      },
    ]);
    await expect.poll(async () => (await lease(id(`${table}_free`, 'b')))?.state, { timeout: 10_000 }).toBe('held');
    const migration = new pg.Client(observedDb.url);
    await migration.connect();
    try {
      await migration.query('BEGIN');
      await migration.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
      await expect.poll(async () => (await source('p-locked'))?.lastError ?? '', { timeout: 15_000 }).toContain(`table ${table} `);
      expect((await source('p-locked'))?.lastError).toMatch(/lock timeout/);
      // Held for 6 s more: the source stays up and the other table is still read.
      await sleep(6_000);
      expect(await source('p-locked')).toMatchObject({ status: 'up' });
      expect(await lease(id(table, 'a'))).toMatchObject({ state: 'held', stale: true });
      await observed.query(`UPDATE ${table}_free SET owner = 'w3', token = 2`);
      await expect.poll(async () => (await lease(id(`${table}_free`, 'b')))?.holder, { timeout: 10_000 }).toBe('w3');
      expect(await lease(id(`${table}_free`, 'b'))).toMatchObject({ stale: false });
    } finally {
      await migration.query('ROLLBACK').catch(() => {});
      await migration.end();
    }
    await expect.poll(async () => (await lease(id(table, 'a')))?.stale, { timeout: 10_000 }).toBe(false);
    expect(await store.prisma.sourceEvent.count({ where: { sourceName: 'p-locked' } })).toBe(0);
    expect(await eventTypes(id(table, 'a'))).toEqual(['acquired']);
  });
});

describe('11. a source whose calls hang is down within its read deadline', () => {
  // Before: a listener that accepts and never answers held the read without a deadline on some
  // paths (Redis's ready check, a SIGSTOPped server): the source stayed `up` for good.
  let silent: SilentListener;
  beforeAll(async () => {
    silent = await startSilentListener();
  });
  afterAll(() => silent.close());

  it.each([
    { backend: 'redis', config: (port: number): SourceConfig => ({ name: 'r-silent', backend: 'redis', urls: [`redis://127.0.0.1:${port}`], match: ['x:*'], fenceSuffix: ':fence', keyspaceNotifications: 'off' }) },
    { backend: 'postgres', config: (port: number): SourceConfig => ({ name: 'p-silent', backend: 'postgres', url: `postgres://u@127.0.0.1:${port}/db`, tables: [], advisoryLocks: true }) },
    { backend: 'etcd', config: (port: number): SourceConfig => ({ name: 'e-silent', backend: 'etcd', endpoints: [`http://127.0.0.1:${port}`], prefixes: ['x/'] }) },
  ])('$backend at a listener that never answers', async ({ config }) => {
    const sourceConfig = config(silent.port);
    collect([sourceConfig], { pollMs: 1_000 });
    // The read deadline is 5 s for a 1 s poll: down within that, plus a poll and the write
    // (before: 10 s at best, and never on the paths where a driver waited without a deadline).
    await expect.poll(async () => (await source(sourceConfig.name))?.status, { timeout: 8_000, interval: 250 }).toBe('down');
    expect(silent.connections()).toBeGreaterThan(0);
  });

  // With keyspace notifications on, a poll only pings: before, the ping and the full read it
  // fell back to each waited for ioredis's socket timeout, one after the other.
  it.each([{ notifications: 'off' as const }, { notifications: 'auto' as const }])('redis stopped (SIGSTOP) while connected, keyspace notifications $notifications: down within the deadline, up again after, nothing invented', async ({ notifications }) => {
    const name = `r-frozen-${notifications}`;
    const frozen = await startRedisServer(16393, ['--notify-keyspace-events', 'KEA']);
    const client = new Redis(frozen.url);
    try {
      await client.set('frozen:lock', 'holder-a', 'PX', 60_000);
      collect([{ name, backend: 'redis', urls: [frozen.url], match: ['frozen:*'], fenceSuffix: ':fence', keyspaceNotifications: notifications }], { pollMs: 1_000 });
      await expect.poll(async () => (await lease(`${name}/frozen:lock`))?.state, { timeout: 10_000 }).toBe('held');
      await sleep(2_000); // the push stream live and a full read after it: polls only ping now
      frozen.process.kill('SIGSTOP');
      let continuedAt = 0;
      try {
        await expect.poll(async () => (await source(name))?.status, { timeout: 8_000, interval: 250 }).toBe('down');
      } finally {
        frozen.process.kill('SIGCONT');
        continuedAt = Date.now();
      }
      await expect.poll(async () => (await source(name))?.status, { timeout: 15_000 }).toBe('up');
      const [down, up] = await store.prisma.sourceEvent.findMany({ where: { sourceName: name }, orderBy: { seq: 'asc' } });
      expect([down?.type, up?.type]).toEqual(['source_down', 'source_up']);
      // source_up is stamped when a read proved the source back, not when that read began.
      expect(up!.at.getTime()).toBeGreaterThanOrEqual(continuedAt - 5);
      expect(await eventTypes(`${name}/frozen:lock`)).toEqual(['acquired']);
    } finally {
      frozen.process.kill('SIGCONT');
      client.disconnect();
      await frozen.stop();
    }
  });
});

describe('11b. keyspaceNotifications: enable switches the events on again when a restart forgot them', () => {
  // Before: the flags were set once, at subscription; a restarted Redis (a CONFIG SET is not
  // kept) left the source polling for good while its panel still said "pushed".
  it('the flags are set again within a few polls, and a change made meanwhile is read', async () => {
    const own = await startRedisServer(16389);
    const client = new Redis(own.url).on('error', () => {});
    const flags = async () => ((await client.config('GET', 'notify-keyspace-events')) as string[])[1] ?? '';
    try {
      collect([{ name: 'r-enable', backend: 'redis', urls: [own.url], match: ['en:*'], fenceSuffix: ':fence', keyspaceNotifications: 'enable' }], { pollMs: 500 });
      await expect.poll(flags, { timeout: 10_000 }).toMatch(/K/);
      await own.kill();
      await own.restart();
      expect(await flags()).toBe(''); // forgotten
      await client.set('en:lock', 'holder-b', 'PX', 60_000);
      await expect.poll(flags, { timeout: 10_000 }).toMatch(/K/);
      await expect.poll(async () => (await lease('r-enable/en:lock'))?.holder, { timeout: 10_000 }).toBe('holder-b');
      // The panel says pushed again (not polling).
      await expect.poll(async () => (((await source('r-enable'))?.detail as { instances?: { keyspaceNotifications: boolean }[] } | null)?.instances ?? []).map((i) => i.keyspaceNotifications), { timeout: 10_000 }).toEqual([true]);
    } finally {
      client.disconnect();
      await own.stop();
    }
  });
});

describe('12. a Redlock quorum with one instance frozen', () => {
  // Before: the frozen instance was counted as answered with no holder, and the lease shown
  // free while a majority held it (or the read hung, and it stayed as it was).
  let servers: RedisServer[];
  beforeAll(async () => {
    // Keyspace notifications on, as on the servers the prober used: polls then only ping, and
    // changes come as hints read on every instance.
    servers = await Promise.all([16395, 16396, 16397].map((port) => startRedisServer(port, ['--notify-keyspace-events', 'KEA'])));
  });
  afterAll(async () => {
    for (const server of servers) server.process.kill('SIGCONT');
    await Promise.all(servers.map((s) => s.stop()));
  });

  it('a lock held on two of three answering instances is held; the frozen one is unknown, not empty', async () => {
    const clients = servers.map((s) => new Redis(s.url));
    const redlock = new Redlock(clients as never[], { retryCount: 0 });
    try {
      const key = `quorum:${unique()}`;
      const lock = await redlock.lock(key, 60_000);
      collect([{ name: 'r-quorum', backend: 'redis', urls: servers.map((s) => s.url), mode: 'redlock', match: ['quorum:*'], fenceSuffix: ':fence', keyspaceNotifications: 'auto' }], {
        pollMs: 500,
      });
      await expect.poll(async () => (await lease(`r-quorum/${key}`))?.state, { timeout: 10_000 }).toBe('held');
      servers[2]!.process.kill('SIGSTOP');
      try {
        await expect
          .poll(async () => ((await lease(`r-quorum/${key}`))?.detail as { heldOn?: number } | null)?.heldOn, { timeout: 15_000 })
          .toBe(2);
        const row = await lease(`r-quorum/${key}`);
        expect(row).toMatchObject({ state: 'held', holder: lock.value, stale: false });
        const perInstance = (row!.detail as { perInstance: { instance: string; answered: boolean; holder: string | null }[] }).perInstance;
        expect(perInstance.map((i) => i.answered)).toEqual([true, true, false]);
        expect(perInstance[2]!.holder).toBeNull();
        expect(await eventTypes(`r-quorum/${key}`)).toEqual(['acquired']);
      } finally {
        servers[2]!.process.kill('SIGCONT');
      }
    } finally {
      await redlock.quit().catch(() => {});
    }
  });

  it('a frozen instance is shown as not answering at the next polls, within its answer deadline, not the read deadline', async () => {
    const clients = servers.map((s) => new Redis(s.url));
    const redlock = new Redlock(clients as never[], { retryCount: 0 });
    try {
      const key = `quorum:${unique()}`;
      await redlock.lock(key, 60_000);
      const name = 'r-quorum-deadline';
      collect([{ name, backend: 'redis', urls: servers.map((s) => s.url), mode: 'redlock', match: ['quorum:*'], fenceSuffix: ':fence', keyspaceNotifications: 'auto' }], { pollMs: 500 });
      await expect.poll(async () => ((await lease(`${name}/${key}`))?.detail as { heldOn?: number } | null)?.heldOn, { timeout: 10_000 }).toBe(3);
      await sleep(1_500); // the push stream live: polls only ping now
      servers[1]!.process.kill('SIGSTOP');
      try {
        // The answer deadline is the 500 ms poll: the next poll gives up on it, reads the other
        // two, and says so (before: the last read stood until the 5 s read deadline, or the
        // next full read, for as long as 30 s).
        const frozenLabel = `127.0.0.1:${new URL(servers[1]!.url).port}`;
        const instances = async () => ((await source(name))?.detail as { instances?: { instance: string; up: boolean; error: string | null }[] } | null)?.instances ?? [];
        // Under 3 s: before, the ping gave up only at ioredis's 3 s command deadline.
        await expect.poll(async () => (await instances()).find((i) => i.instance === frozenLabel)?.up, { timeout: 2_900, interval: 100 }).toBe(false);
        expect((await instances()).find((i) => i.instance === frozenLabel)?.error).toMatch(/did not answer within 500 ms|has not answered an earlier call yet/);
        await expect.poll(async () => ((await lease(`${name}/${key}`))?.detail as { heldOn?: number } | null)?.heldOn, { timeout: 2_500, interval: 100 }).toBe(2);
        expect(await source(name)).toMatchObject({ status: 'up' });
        expect(await lease(`${name}/${key}`)).toMatchObject({ state: 'held', stale: false });
      } finally {
        servers[1]!.process.kill('SIGCONT');
      }
      // Back: answering again at the next polls, and nothing invented meanwhile.
      await expect.poll(async () => ((await lease(`${name}/${key}`))?.detail as { heldOn?: number } | null)?.heldOn, { timeout: 10_000 }).toBe(3);
      expect(await eventTypes(`${name}/${key}`)).toEqual(['acquired']);
    } finally {
      await redlock.quit().catch(() => {});
    }
  });

  it('held on one answering instance and perhaps on the frozen one: unknown, never free, and nothing invented', async () => {
    const clients = servers.map((s) => new Redis(s.url));
    const redlock = new Redlock(clients as never[], { retryCount: 0 });
    try {
      const key = `quorum:${unique()}`;
      const lock = await redlock.lock(key, 60_000);
      await clients[0]!.del(key); // held on instances 2 and 3 only: still a majority
      collect([{ name: 'r-quorum2', backend: 'redis', urls: servers.map((s) => s.url), mode: 'redlock', match: ['quorum:*'], fenceSuffix: ':fence', keyspaceNotifications: 'auto' }], {
        pollMs: 500,
      });
      await expect.poll(async () => (await lease(`r-quorum2/${key}`))?.holder, { timeout: 10_000 }).toBe(lock.value);
      servers[2]!.process.kill('SIGSTOP');
      try {
        // One of three holds it, one is empty, one does not answer: it may be held on two.
        await expect.poll(async () => (await lease(`r-quorum2/${key}`))?.state, { timeout: 15_000 }).toBe('unknown');
        const row = await lease(`r-quorum2/${key}`);
        expect(row?.problem).toMatch(/held on 1 of 3 instances, 1 did not answer/);
        expect(await eventTypes(`r-quorum2/${key}`)).toEqual(['acquired']);
      } finally {
        servers[2]!.process.kill('SIGCONT');
      }
      // Back: held on two again, and still no release or takeover was invented.
      await expect.poll(async () => (await lease(`r-quorum2/${key}`))?.state, { timeout: 15_000 }).toBe('held');
      expect(await eventTypes(`r-quorum2/${key}`)).toEqual(['acquired']);
    } finally {
      await redlock.quit().catch(() => {});
    }
  });
});

describe('13. lesser points', () => {
  it('etcd: deleting a single key whose last segment looks like a lease id is seen at once, as its own release', async () => {
    const prefix = `hex${unique()}/`;
    const reads: ReadReport[] = [];
    // Full reads every 10 s at most (the watch carries changes): the release must come from it.
    collect([{ name: 'e-hex', backend: 'etcd', endpoints: services.etcdEndpoints, prefixes: [prefix], pollMs: 5_000 }], { onRead: (read) => reads.push(read) });
    const grant = etcd.lease(30, { autoKeepAlive: false });
    const key = `${prefix}deadbeef`;
    await grant.put(key).value('holder-a');
    await expect.poll(async () => (await lease(`e-hex/${key}`))?.state, { timeout: 15_000 }).toBe('held');
    await sleep(500);
    const from = reads.length;
    await etcd.delete().key(key);
    await expect.poll(async () => (await lease(`e-hex/${key}`))?.state, { timeout: 4_000 }).toBe('free');
    // The read that saw it was a targeted one, not the next full read.
    const saw = reads.slice(from).find((read) => read.events > 0);
    expect(saw).toBeDefined();
    expect(saw!.kind).not.toBe('full');
    expect(await eventTypes(`e-hex/${key}`)).toEqual(['acquired', 'released']);
    await grant.revoke();
  });
});
