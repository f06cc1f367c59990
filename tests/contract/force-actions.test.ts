// The guarded actions' backend half (lib/sources/force.ts), on the real servers, for every
// layout the adapters read: each action is one compare-and-set against the holder and token
// the person saw; on a fenced layout it raises the token, every later grant through lib/lease
// is above it and the fenced store rejects the old holder's late write; a stale expectation
// changes nothing; an unfenced lease cannot be force-expired; plan() changes nothing; a
// quarantine keeps everybody out for its duration; and a force racing the holder's own renew
// or release has exactly one winner, 500 times over per backend.
import { randomBytes } from 'node:crypto';
import { Etcd3 } from 'etcd3';
import Redis from 'ioredis';
import pg from 'pg';
import Redlock from 'redlock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SourceConfig } from '../../lib/config';
import { stateOf, type Observation } from '../../lib/domain/observe';
import { createFencedStore, createLeaderElector, createLeaseClient, LeaseLostError, type FencedStore, type LeaseClient } from '../../lib/lease';
import { ForceConflictError, ForceNotPossibleError, QUARANTINE_HOLDER, type ForceActions, type ForceRefusal, type ForceRequest } from '../../lib/sources/force';
import { forceActionsFor } from '../../lib/sources/force-registry';
import { createSource } from '../../lib/sources/registry';
import type { LeaseSource } from '../../lib/sources/types';
import { createPostgresDatabase, type TestDatabase } from '../support/databases';
import { etcdLayouts, postgresLayouts, redisLayouts } from '../support/lease-layouts';
import { testServices } from '../support/services';

const services = testServices();
const etcdEndpoint = services.etcdEndpoints[0]!;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const uid = () => randomBytes(4).toString('hex');
const deadline = () => AbortSignal.timeout(15_000);
const BEYOND_2_63 = (2n ** 64n + 7n).toString();
// In every Redis key this file makes: the fence counters lib/lease leaves (it never deletes one) are removed at the end.
const RUN = `force${uid()}`;

let db: TestDatabase & { url: string };
let store: FencedStore;
const [pgLeaseTable, pgShedlock] = postgresLayouts(() => db.url);
const [redisLeasehold] = redisLayouts(() => services.redisUrl);
const [, etcdElector, , etcdctlElect, etcdctlLock] = etcdLayouts(() => etcdEndpoint);
const pgConfig = () => pgLeaseTable!.source() as Extract<SourceConfig, { backend: 'postgres' }>;
const redisConfig = () => ({ ...redisLeasehold!.source(), keyspaceNotifications: 'off' }) as SourceConfig;
const etcdConfig = () => etcdElector!.source() as Extract<SourceConfig, { backend: 'etcd' }>;
const etcdPrefix = () => etcdConfig().prefixes[0]!;

// Everything opened is closed at the end, whatever failed.
const cleanups: (() => Promise<unknown>)[] = [];
const opened = <T extends { close(): Promise<unknown> | void }>(thing: T): T => {
  cleanups.push(async () => thing.close());
  return thing;
};
const actionsOn = (config: SourceConfig) => opened(forceActionsFor(config));
const sourceOn = (config: SourceConfig) => opened(createSource(config, 1_000));

beforeAll(async () => {
  db = await createPostgresDatabase('lh_force');
  await pgLeaseTable!.setup!();
  store = createFencedStore({ url: db.url, table: `force_fenced_${uid()}` });
});
afterAll(async () => {
  await Promise.allSettled(cleanups.splice(0).reverse().map((close) => close()));
  await store.close();
  await db.drop();
  const redis = new Redis(services.redisUrl);
  const stream = redis.scanStream({ match: `obs:*${RUN}*`, count: 1_000 });
  for await (const keys of stream) if ((keys as string[]).length) await redis.del(...(keys as string[]));
  redis.disconnect();
});

async function observed(source: LeaseSource, key: string): Promise<Observation | undefined> {
  return (await source.snapshot(AbortSignal.timeout(10_000))).observations.find((o) => o.key === key);
}
const held = (o: Observation | undefined) => o !== undefined && stateOf(o) === 'held';

async function conflictOf(promise: Promise<unknown>): Promise<ForceConflictError> {
  const error = await promise.then(() => new Error('expected a ForceConflictError, but the action was applied'), (e: unknown) => e);
  expect(error).toBeInstanceOf(ForceConflictError);
  return error as ForceConflictError;
}
async function refusalOf(promise: Promise<unknown>, code: ForceRefusal): Promise<ForceNotPossibleError> {
  const error = await promise.then(() => new Error(`expected a ForceNotPossibleError (${code}), but it was done`), (e: unknown) => e);
  expect(error).toBeInstanceOf(ForceNotPossibleError);
  expect((error as ForceNotPossibleError).code, (error as Error).message).toBe(code);
  return error as ForceNotPossibleError;
}

// ------------------------------------------------------------------ fenced layouts, through lib/lease

type FencedCase = {
  name: string;
  config: () => SourceConfig;
  client: () => LeaseClient;
  /** The key lib/lease takes, and the key the source reports. */
  keys: (label: string) => { leaseKey: string; sourceKey: string };
  ttlMs: number;
  quarantineMs: number;
  /** The remaining time the backend reports is this coarse (etcd: whole seconds). */
  precisionMs: number;
};

const FENCED: FencedCase[] = [
  {
    name: 'postgres: lib/lease lease table',
    config: pgConfig,
    client: () => opened(createLeaseClient({ backend: 'postgres', url: db.url, table: pgConfig().tables[0]!.table })),
    keys: (label) => ({ leaseKey: label, sourceKey: `${pgConfig().tables[0]!.table}/${label}` }),
    ttlMs: 30_000,
    quarantineMs: 1_000,
    precisionMs: 50,
  },
  {
    name: 'redis: lib/lease (SET NX PX + fence counter)',
    config: redisConfig,
    client: () => opened(createLeaseClient({ backend: 'redis', urls: [services.redisUrl] })),
    keys: (label) => ({ leaseKey: `obs:lease:${RUN}:${label}`, sourceKey: `obs:lease:${RUN}:${label}` }),
    ttlMs: 30_000,
    quarantineMs: 1_000,
    precisionMs: 50,
  },
  {
    name: 'etcd: lib/lease single key',
    config: etcdConfig,
    client: () => opened(createLeaseClient({ backend: 'etcd', endpoints: [etcdEndpoint] })),
    keys: (label) => ({ leaseKey: `${etcdPrefix()}lock/${label}`, sourceKey: `${etcdPrefix()}lock/${label}` }),
    ttlMs: 30_000,
    quarantineMs: 2_000,
    precisionMs: 1_500,
  },
];

describe.each(FENCED)('fenced: $name', (kase) => {
  let actions: ForceActions;
  let source: LeaseSource;
  beforeAll(() => {
    actions = actionsOn(kase.config());
    source = sourceOn(kase.config());
  });
  const hold = async (label: string) => {
    const client = kase.client();
    const { leaseKey, sourceKey } = kase.keys(`${label}-${uid()}`);
    const lease = (await client.acquire(leaseKey, { holder: 'worker', ttlMs: kase.ttlMs }))!;
    expect(lease).not.toBeNull();
    const request = (action: ForceRequest['action'], more: Partial<ForceRequest> = {}): ForceRequest => ({
      action,
      key: sourceKey,
      expectedHolder: lease.holder,
      expectedToken: lease.token.toString(),
      ...more,
    });
    return { client, lease, leaseKey, sourceKey, request };
  };

  it.each(['force-expire', 'force-release'] as const)(
    '%s frees the lease and raises its token; the next grant is above it and the old holder cannot renew or write',
    async (action) => {
      const { client, lease, leaseKey, sourceKey, request } = await hold(action);
      const resource = `res-${uid()}`;
      expect(await store.write(resource, lease.token, 'old holder, before')).toBe('accepted');
      const done = await actions.execute(request(action), deadline());
      expect(done.previousToken).toBe(lease.token.toString());
      expect(BigInt(done.newToken!)).toBeGreaterThan(lease.token);
      expect(held(await observed(source, sourceKey))).toBe(false);
      await expect(client.renew(lease)).rejects.toBeInstanceOf(LeaseLostError);
      const next = (await kase.client().acquire(leaseKey, { holder: 'successor', ttlMs: kase.ttlMs }))!;
      expect(next).not.toBeNull();
      expect(next.token).toBeGreaterThan(BigInt(done.newToken!));
      expect(await store.write(resource, next.token, 'successor')).toBe('accepted');
      expect(await store.write(resource, lease.token, 'old holder, late')).toBe('rejected');
      expect((await store.log(resource)).map((w) => w.value)).toEqual(['old holder, before', 'successor']);
    },
  );

  it('a stale token, another holder or a token beyond 2^63 is a conflict naming the current state, and changes nothing', async () => {
    const { client, lease, sourceKey, request } = await hold('stale');
    const before = (await client.inspect(lease.key))!;
    const current = { holder: lease.holder, token: lease.token.toString() };
    for (const stale of [
      request('force-expire', { expectedToken: (lease.token - 1n).toString() }),
      request('force-expire', { expectedHolder: `${lease.holder}-not` }),
      request('force-release', { expectedToken: BEYOND_2_63 }),
      request('force-expire', { expectedHolder: 'worker\\x00\\xff\\u202e', quarantineMs: 1_000 }),
    ]) {
      expect((await conflictOf(actions.execute(stale, deadline()))).current).toEqual(current);
    }
    const after = (await client.inspect(lease.key))!;
    expect(after).toMatchObject({ holder: lease.holder, token: lease.token });
    expect(after.remainingMs!).toBeGreaterThan(before.remainingMs! - kase.precisionMs - 1_000);
    expect(held(await observed(source, sourceKey))).toBe(true);
    await expect(client.renew(lease)).resolves.toMatchObject({ token: lease.token });
  });

  it('plan() shows what execute() sends, without credentials, and changes nothing', async () => {
    const { client, lease, sourceKey, request } = await hold('plan');
    const plan = await actions.plan(request('force-expire', { quarantineMs: kase.quarantineMs }));
    expect(plan.fenced).toBe(true);
    expect(plan.steps.length).toBeGreaterThan(0);
    const text = JSON.stringify(plan);
    expect(text).toContain(lease.token.toString());
    expect(text).toContain(lease.holder);
    expect(plan.steps.every((s) => s.statement.length > 10 && s.what.length > 10)).toBe(true);
    for (const secret of ['postgres://', 'redis://', 'http://', `:${new URL(db.url).password}@`]) expect(text).not.toContain(secret);
    const after = (await client.inspect(lease.key))!;
    expect(after).toMatchObject({ holder: lease.holder, token: lease.token });
    const seen = await observed(source, sourceKey);
    expect(seen).toMatchObject({ holder: lease.holder, token: lease.token });
    // Nothing was consumed: the planned request still applies.
    await expect(actions.execute(request('force-expire'), deadline())).resolves.toMatchObject({ previousToken: lease.token.toString() });
  });

  it('a quarantine holds the lease for leasehold:quarantine: nobody acquires it until it ends, then above the raised token', async () => {
    const { leaseKey, sourceKey, request } = await hold('quarantine');
    const started = performance.now();
    const done = await actions.execute(request('force-expire', { quarantineMs: kase.quarantineMs }), deadline());
    expect(await observed(source, sourceKey)).toMatchObject({ holder: QUARANTINE_HOLDER });
    const contender = kase.client();
    expect(await contender.acquire(leaseKey, { holder: 'eager', ttlMs: kase.ttlMs })).toBeNull();
    const next = (await contender.acquire(leaseKey, { holder: 'patient', ttlMs: kase.ttlMs, waitMs: kase.quarantineMs + 5_000, retryEveryMs: 50 }))!;
    expect(next).not.toBeNull();
    expect(performance.now() - started).toBeGreaterThanOrEqual(kase.quarantineMs - 50);
    expect(next.token).toBeGreaterThan(BigInt(done.newToken!));
  });
});

// ------------------------------------------------------------------ unfenced layouts

describe('postgres: a statement the server refuses', () => {
  it('a source whose user may not write (a read-only session) is refused as such, nothing applied, not "outcome unknown"', async () => {
    const client = opened(createLeaseClient({ backend: 'postgres', url: db.url, table: pgConfig().tables[0]!.table }));
    const label = `readonly-${uid()}`;
    const lease = (await client.acquire(label, { holder: 'worker', ttlMs: 30_000 }))!;
    // The same database, every transaction read-only: the UPDATE fails with SQLSTATE 25006.
    const url = new URL(pgConfig().url);
    url.searchParams.set('options', '-c default_transaction_read_only=on');
    const readOnly = actionsOn({ ...pgConfig(), name: 'pg-read-only', url: url.toString() });
    const request: ForceRequest = { action: 'force-expire', key: `${pgConfig().tables[0]!.table}/${label}`, expectedHolder: lease.holder, expectedToken: lease.token.toString() };
    const error = await readOnly.execute(request, deadline()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ForceNotPossibleError);
    expect((error as ForceNotPossibleError).code).toBe('backend_refused');
    expect((error as Error).message).toMatch(/SQLSTATE 25006.*nothing was applied/);
    expect((error as Error).message).not.toContain(url.password || 'leasehold:leasehold@');
    expect(await client.inspect(label)).toMatchObject({ holder: lease.holder, token: lease.token });
    await client.renew(lease);
  });
});

describe('unfenced: postgres ShedLock table', () => {
  let actions: ForceActions;
  let source: LeaseSource;
  let sql: pg.Client;
  beforeAll(async () => {
    actions = actionsOn(pgConfig());
    source = sourceOn(pgConfig());
    sql = new pg.Client(db.url);
    sql.on('error', () => {});
    await sql.connect();
    cleanups.push(() => sql.end());
  });
  const table = () => pgConfig().tables[1]!.table;
  // ShedLock's own lock statement (JdbcTemplateLockProvider, usingDbTime): true when it took the row.
  const shedlockTakes = async (name: string, by: string) =>
    (
      await sql.query(
        `UPDATE ${table()} SET lock_until = timezone('utc', CURRENT_TIMESTAMP) + interval '30 seconds', locked_at = timezone('utc', CURRENT_TIMESTAMP), locked_by = $2
          WHERE name = $1 AND lock_until <= timezone('utc', CURRENT_TIMESTAMP)`,
        [name, by],
      )
    ).rowCount === 1;
  const row = async (name: string) => (await sql.query(`SELECT locked_by, lock_until::text AS lock_until FROM ${table()} WHERE name = $1`, [name])).rows[0];
  const hold = async () => {
    const label = `shed-${uid()}`;
    const lease = await pgShedlock!.hold(label);
    cleanups.push(() => lease.release());
    return { label, key: lease.key, request: (more: Partial<ForceRequest> = {}): ForceRequest => ({ action: 'force-release', key: lease.key, expectedHolder: 'app-host-3', expectedToken: null, ...more }) };
  };

  it('cannot be force-expired; a wrong holder or a token is a conflict; plan() and refusals change nothing', async () => {
    const { label, key, request } = await hold();
    const before = await row(label);
    await refusalOf(actions.execute(request({ action: 'force-expire' }), deadline()), 'unfenced');
    await refusalOf(actions.execute(request({ action: 'force-expire', expectedToken: '1' }), deadline()), 'unfenced');
    await refusalOf(actions.plan(request({ action: 'force-expire', expectedToken: '1' })), 'unfenced');
    expect((await conflictOf(actions.execute(request({ expectedHolder: 'app-host-4' }), deadline()))).current).toEqual({ holder: 'app-host-3', token: null });
    expect((await conflictOf(actions.execute(request({ expectedToken: '7' }), deadline()))).current).toEqual({ holder: 'app-host-3', token: null });
    const plan = await actions.plan(request({ quarantineMs: 500 }));
    expect(plan).toMatchObject({ layout: 'shedlock table', fenced: false });
    expect(plan.steps[0]!.statement).toMatch(/UPDATE/);
    expect(plan.steps[0]!.statement).not.toMatch(/DELETE/);
    expect(await row(label)).toEqual(before);
    expect(held(await observed(source, key))).toBe(true);
  });

  it('force-release moves lock_until to now, keeps the row, and ShedLock takes it again at once', async () => {
    const { label, key, request } = await hold();
    expect(await shedlockTakes(label, 'app-host-9')).toBe(false);
    expect(await actions.execute(request(), deadline())).toMatchObject({ previousToken: null, newToken: null });
    expect(held(await observed(source, key))).toBe(false);
    expect(await row(label)).toMatchObject({ locked_by: 'app-host-3' });
    expect(await shedlockTakes(label, 'app-host-9')).toBe(true);
  });

  it('with a quarantine, ShedLock cannot take the row until it ends', async () => {
    const { label, key, request } = await hold();
    await actions.execute(request({ quarantineMs: 800 }), deadline());
    expect(await observed(source, key)).toMatchObject({ holder: QUARANTINE_HOLDER, token: null });
    expect(await shedlockTakes(label, 'app-host-9')).toBe(false);
    await sleep(900);
    expect(await shedlockTakes(label, 'app-host-9')).toBe(true);
  });
});

describe('unfenced: postgres advisory lock', () => {
  let actions: ForceActions;
  let source: LeaseSource;
  beforeAll(() => {
    actions = actionsOn(pgConfig());
    source = sourceOn(pgConfig());
  });
  // A session holding an advisory lock and one waiting for it (as the advisory layout of
  // tests/support/lease-layouts.ts makes them), ready to be terminated.
  const hold = async () => {
    const lockKey = Math.floor(Math.random() * 2 ** 31);
    const session = async (name: string) => {
      const client = new pg.Client({ connectionString: db.url, application_name: name });
      client.on('error', () => {});
      await client.connect();
      cleanups.push(() => client.end().catch(() => {}));
      return client;
    };
    const [holder, waiter] = [await session('migrator'), await session('second-migrator')];
    const pid = (await holder.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
    await holder.query('SELECT pg_advisory_lock($1::bigint)', [lockKey]);
    const waiting = waiter.query('SELECT pg_advisory_lock($1::bigint)', [lockKey]).catch(() => {});
    const key = `advisory/${lockKey}`;
    await expect.poll(async () => (await observed(source, key))?.candidates.length, { timeout: 5_000 }).toBe(1);
    const seen = (await observed(source, key))!;
    expect(seen.holder).toBe(`pid ${pid} migrator @ 127.0.0.1`);
    const request = (more: Partial<ForceRequest> = {}): ForceRequest => ({ action: 'force-release', key, expectedHolder: seen.holder!, expectedToken: null, ...more });
    return { key, holder, waiting, pid, seen, request };
  };

  it('cannot be force-expired nor quarantined; plan() names the session it would end and changes nothing; a wrong holder is a conflict', async () => {
    const { key, holder, pid, seen, request } = await hold();
    await refusalOf(actions.execute(request({ action: 'force-expire', expectedToken: '1' }), deadline()), 'unfenced');
    await refusalOf(actions.execute(request({ quarantineMs: 1_000 }), deadline()), 'not_supported');
    const plan = await actions.plan(request());
    expect(plan).toMatchObject({ layout: 'advisory lock', fenced: false, detail: { matchesNow: true, session: { pid, applicationName: 'migrator', clientAddr: '127.0.0.1' } } });
    expect(plan.steps[0]!.statement).toMatch(/pg_terminate_backend/);
    expect(plan.steps[0]!.args).toContain(String(pid));
    const other = (await conflictOf(actions.execute(request({ expectedHolder: `pid ${pid + 100000} migrator @ 127.0.0.1` }), deadline()))).current;
    expect(other).toEqual({ holder: seen.holder, token: null });
    await conflictOf(actions.execute(request({ expectedToken: '3' }), deadline()));
    expect((await observed(source, key))!.holder).toBe(seen.holder);
    await expect(holder.query('SELECT 1')).resolves.toBeDefined();
  });

  it('force-release ends the holding session, only that one; the waiter gets the lock', async () => {
    const { key, holder, waiting, pid, request } = await hold();
    const done = await actions.execute(request(), deadline());
    expect(done).toMatchObject({ previousToken: null, newToken: null, detail: { terminated: { pid, applicationName: 'migrator' }, exited: true } });
    await expect(holder.query('SELECT 1')).rejects.toThrow();
    await waiting;
    expect((await observed(source, key))!.holder).toMatch(/^pid \d+ second-migrator @ 127\.0\.0\.1$/);
  });
});

describe('unfenced: redis lock of the npm redlock package', () => {
  let actions: ForceActions;
  let source: LeaseSource;
  let redis: Redis;
  beforeAll(() => {
    actions = actionsOn(redisConfig());
    source = sourceOn(redisConfig());
    redis = new Redis(services.redisUrl);
    cleanups.push(async () => redis.disconnect());
  });
  // The npm redlock package's lock (no fence counter), as the redlock layout of
  // tests/support/lease-layouts.ts makes it, on this file's own connection.
  const redlockTakes = async (key: string) => {
    const redlock = new Redlock([redis as never], { retryCount: 0 });
    return redlock.lock(key, 30_000).then((lock) => lock, () => null);
  };
  const hold = async () => {
    const key = `obs:redlock:${RUN}:${uid()}`;
    const lock = (await redlockTakes(key))!;
    const lease = { key, holder: String(lock.value) };
    const request = (more: Partial<ForceRequest> = {}): ForceRequest => ({ action: 'force-release', key, expectedHolder: lease.holder, expectedToken: null, ...more });
    return { lease, request };
  };

  it('cannot be force-expired (it has no fence counter); a wrong holder is a conflict; nothing changes', async () => {
    const { lease, request } = await hold();
    const pttl = await redis.pttl(lease.key);
    await refusalOf(actions.execute(request({ action: 'force-expire' }), deadline()), 'unfenced');
    await refusalOf(actions.plan(request({ action: 'force-expire', expectedToken: '1' })), 'unfenced');
    expect((await conflictOf(actions.execute(request({ expectedHolder: 'someone-else' }), deadline()))).current).toEqual({ holder: lease.holder, token: null });
    expect((await conflictOf(actions.execute(request({ expectedToken: '4' }), deadline()))).current).toEqual({ holder: lease.holder, token: null });
    expect(await actions.plan(request())).toMatchObject({ fenced: false, layout: 'redis lock without a fence counter' });
    expect(await redis.get(lease.key)).toBe(lease.holder);
    expect(await redis.pttl(lease.key)).toBeGreaterThan(pttl - 1_000);
  });

  it('force-release deletes the lock (compare-and-delete), and another client locks it at once', async () => {
    const { lease, request } = await hold();
    expect(await redlockTakes(lease.key)).toBeNull();
    expect(await actions.execute(request(), deadline())).toMatchObject({ previousToken: null, newToken: null });
    expect(await observed(source, lease.key)).toBeUndefined();
    expect(await redlockTakes(lease.key)).not.toBeNull();
  });

  it('with a quarantine, the lock is held by leasehold:quarantine until it ends', async () => {
    const { lease, request } = await hold();
    await actions.execute(request({ quarantineMs: 600 }), deadline());
    expect(await observed(source, lease.key)).toMatchObject({ holder: QUARANTINE_HOLDER, token: null });
    expect(await redlockTakes(lease.key)).toBeNull();
    await sleep(700);
    expect(await redlockTakes(lease.key)).not.toBeNull();
  });

  it('a holder of binary bytes and invisible characters is compared exactly as the adapter shows it', async () => {
    const key = `obs:binary:${RUN}:${uid()}`;
    await redis.set(key, Buffer.concat([Buffer.from([0x00, 0xff, 0x1b, 0x5c]), Buffer.from('\u202eevil\n')]), 'PX', 30_000);
    const seen = (await observed(source, key))!;
    expect(seen.holder).toBe('\\x00\\xff\\x1b\\\\\\u202eevil\\x0a');
    const request: ForceRequest = { action: 'force-release', key, expectedHolder: seen.holder!, expectedToken: null };
    expect((await conflictOf(actions.execute({ ...request, expectedHolder: `${seen.holder}x` }, deadline()))).current).toEqual({ holder: seen.holder, token: null });
    await actions.execute(request, deadline());
    expect(await redis.exists(key)).toBe(0);
  });

  it('a Redlock quorum source is refused before anything is sent', async () => {
    const quorum = actionsOn({ ...(redisConfig() as Extract<SourceConfig, { backend: 'redis' }>), name: 'quorum', urls: [1, 2, 3].map((n) => `${services.redisUrl}/${n}`), mode: 'redlock' });
    const request: ForceRequest = { action: 'force-expire', key: 'obs:quorum:x', expectedHolder: 'w', expectedToken: '1' };
    expect((await refusalOf(quorum.plan(request), 'not_supported')).message).toMatch(/Redlock quorum of 3 instances/);
    await refusalOf(quorum.execute(request, deadline()), 'not_supported');
  });
});

// ------------------------------------------------------------------ etcd elections and mutexes

describe('etcd elections and mutexes', () => {
  let actions: ForceActions;
  let source: LeaseSource;
  beforeAll(() => {
    actions = actionsOn(etcdConfig());
    source = sourceOn(etcdConfig());
  });
  const requestFor = (seen: Observation, more: Partial<ForceRequest> = {}): ForceRequest => ({
    action: 'force-expire',
    key: seen.key,
    expectedHolder: seen.holder!,
    expectedToken: seen.token!.toString(),
    ...more,
  });

  it('lib/lease elector with a queued candidate (hex ids): no quarantine; force-expire hands over to the queued one, whose token is above the old one', async () => {
    const key = `${etcdPrefix()}election/${uid()}`;
    const stop = new AbortController();
    const tokens: Record<string, bigint> = {};
    const elector = (holder: string) => {
      const client = opened(createLeaseClient({ backend: 'etcd', endpoints: [etcdEndpoint] }));
      const running = createLeaderElector({ client, key, holder, ttlMs: 6_000, renewEveryMs: 500, onError: () => {}, onStartedLeading: (_s, t) => void (tokens[holder] = t) }).run(stop.signal);
      cleanups.push(async () => {
        stop.abort();
        await running;
      });
    };
    elector('first');
    await expect.poll(() => tokens.first, { timeout: 10_000 }).toBeDefined();
    elector('second');
    await expect.poll(async () => (await observed(source, key))?.candidates.length, { timeout: 10_000 }).toBe(1);
    const seen = (await observed(source, key))!;
    expect(seen.token).toBe(tokens.first);
    await refusalOf(actions.plan(requestFor(seen, { quarantineMs: 2_000 })), 'not_supported');
    await refusalOf(actions.execute(requestFor(seen, { quarantineMs: 2_000 }), deadline()), 'not_supported');
    const plan = await actions.plan(requestFor(seen));
    expect(plan).toMatchObject({ layout: 'etcd election', fenced: true, detail: { matchesNow: true, queued: 1 } });
    expect(plan.steps.map((s) => s.statement).join(' ')).toMatch(/Txn\(compare.*LeaseRevoke/s);
    const done = await actions.execute(requestFor(seen), deadline());
    expect(done.previousToken).toBe(tokens.first!.toString());
    await expect.poll(() => tokens.second, { timeout: 10_000 }).toBeDefined();
    // The queued candidate keeps its own create revision: above the old token, below the force's revision.
    expect(tokens.second).toBeGreaterThan(tokens.first!);
    expect(tokens.second).toBeLessThan(BigInt(done.newToken!));
    await expect.poll(async () => (await observed(source, key))?.holder, { timeout: 10_000 }).toMatch(/^second:/);
  });

  it('etcd3 npm Election (decimal ids): a quarantine keeps the next campaign waiting until it ends, then it leads above the raised token', async () => {
    const client = opened(new Etcd3({ hosts: [etcdEndpoint] }));
    const name = `${etcdPrefix()}npm-election/${uid()}`;
    // The etcd3 npm Election keeps its candidates under "election/<name>/<lease id in decimal>".
    const key = `election/${name}`;
    const first = client.election(name, 30).campaign('npm-first');
    first.on('error', () => {});
    await first.wait();
    const seen = (await observed(source, key))!;
    expect(seen).toMatchObject({ holder: 'npm-first' });
    const done = await actions.execute(requestFor(seen, { quarantineMs: 2_000 }), deadline());
    const started = performance.now();
    expect(await observed(source, key)).toMatchObject({ holder: QUARANTINE_HOLDER, token: BigInt(done.newToken!) });
    const second = client.election(name, 30).campaign('npm-second');
    second.on('error', () => {});
    await second.wait();
    expect(performance.now() - started).toBeGreaterThan(1_000);
    const next = (await observed(source, key))!;
    expect(next.holder).toBe('npm-second');
    expect(next.token!).toBeGreaterThan(BigInt(done.newToken!));
    await second.resign();
  });

  it('etcdctl elect: force-release deletes the proposal and revokes its session', async () => {
    const lease = await etcdctlElect!.hold(uid());
    cleanups.push(() => lease.release());
    const seen = (await observed(source, lease.key))!;
    expect(seen.holder).toBe('etcdctl-proposal');
    const done = await actions.execute(requestFor(seen, { action: 'force-release' }), deadline());
    expect(done.detail).toMatchObject({ layout: 'etcd election', holderLease: { outcome: 'revoked' } });
    expect(held(await observed(source, lease.key))).toBe(false);
  });

  it('etcdctl lock (a mutex with a waiter): force-expire passes the lock to the waiter', async () => {
    const lease = await etcdctlLock!.hold(uid());
    cleanups.push(() => lease.release());
    const seen = (await observed(source, lease.key))!;
    expect(seen).toMatchObject({ kind: 'lock', holder: expect.stringMatching(/^lease [0-9a-f]+$/) });
    const done = await actions.execute(requestFor(seen), deadline());
    expect(done.detail).toMatchObject({ layout: 'etcd mutex' });
    await expect.poll(async () => (await observed(source, lease.key))?.holder, { timeout: 10_000 }).toBe(seen.candidates[0]!.holder);
    expect((await observed(source, lease.key))!.token!).toBeGreaterThan(seen.token!);
  });
});

// ------------------------------------------------------------------ hostile input

describe('hostile input: clear refusals or conflicts, never a crash', () => {
  const SOURCES = [
    { name: 'postgres', config: pgConfig, key: () => `${pgConfig().tables[0]!.table}/hostile`, elsewhere: 'no_such_table/x', digestHolder: 'not_supported' },
    { name: 'redis', config: redisConfig, key: () => 'obs:hostile', elsewhere: 'elsewhere:x', digestHolder: 'not_supported' },
    // etcd compares the holder as exact text made of the value it reads: the long form names one too.
    { name: 'etcd', config: etcdConfig, key: () => `${etcdPrefix()}hostile`, elsewhere: 'elsewhere/x', digestHolder: 'conflict' },
  ];
  const base = (key: string): ForceRequest => ({ action: 'force-release', key, expectedHolder: 'worker', expectedToken: '5' });

  it.each(SOURCES)('$name', async ({ config, key, elsewhere, digestHolder }) => {
    const actions = actionsOn(config());
    const cases: [Partial<ForceRequest> & Record<string, unknown>, ForceRefusal][] = [
      [{ key: `${key()}${'k'.repeat(10_240)}` }, 'invalid'],
      [{ key: `${key()}-${'\\x01'.repeat(1_030)}` }, 'invalid'],
      [{ key: `${key()}…[2048 bytes, sha256:0123456789abcdef0123456789abcdef]` }, 'not_supported'],
      [{ key: `${key()}\\q` }, 'invalid'],
      [{ key: elsewhere }, 'not_found'],
      [{ expectedHolder: 'h'.repeat(10_240) }, 'invalid'],
      [{ expectedHolder: 'w\ud800' }, 'invalid'],
      ...['abc', '-1', '1.5', '1e3', '9'.repeat(79), ''].map((t): [Partial<ForceRequest>, ForceRefusal] => [{ expectedToken: t }, 'invalid']),
      ...[0, 1.5, -5, 10 ** 9, Number.NaN].map((q): [Partial<ForceRequest>, ForceRefusal] => [{ quarantineMs: q }, 'invalid']),
      [{ action: 'delete' as never }, 'invalid'],
      [{ action: 'force-expire', expectedToken: null }, 'unfenced'],
    ];
    for (const [change, code] of cases) {
      await refusalOf(actions.execute({ ...base(key()), ...change }, deadline()), code);
      await refusalOf(actions.plan({ ...base(key()), ...change }), code);
    }
    const longHolder: Partial<ForceRequest> = { expectedHolder: 'head…[4096 bytes, sha1:0123456789abcdef0123456789abcdef]' };
    if (digestHolder === 'conflict') await conflictOf(actions.execute({ ...base(key()), ...longHolder }, deadline()));
    else await refusalOf(actions.execute({ ...base(key()), ...longHolder }, deadline()), 'not_supported');
    // Well-formed but matching nothing: a conflict, whatever the bytes.
    for (const expectedHolder of ['\\x00\\xff\\u202e', 'é'.repeat(500), QUARANTINE_HOLDER]) {
      expect((await conflictOf(actions.execute({ ...base(key()), expectedHolder, expectedToken: BEYOND_2_63 }, deadline()))).current).toBeNull();
    }
    // A cancelled action sends nothing.
    const cancelled = new AbortController();
    cancelled.abort();
    await expect(actions.execute(base(key()), cancelled.signal)).rejects.toThrow(/cancelled before anything was sent/);
  });
});

// ------------------------------------------------------------------ races

describe('races: a holder renewing or releasing while an operator force-expires what they saw', () => {
  const ITERATIONS = 500;
  const CONCURRENCY = 4;

  // Exactly one of the two compare-and-sets on the grant wins: the force, or the holder.
  // 'release' makes both compare the same state, so either may win. 'renew' changes nothing the
  // force compares (lib/lease renews extend, they do not re-grant), so the force wins, and what
  // must hold is that the grant is then dead: a renew after both settled fails. etcd runs only
  // 'renew': lib/lease's etcd release is a read and then a LeaseRevoke, not one compare-and-set,
  // so both it and a force landing between its two calls report success (harmless: both end
  // the same grant, but that is not one winner).
  const RACES: (FencedCase & { kinds: ('renew' | 'release')[] })[] = [
    { ...FENCED[0]!, kinds: ['renew', 'release'] },
    { ...FENCED[1]!, kinds: ['renew', 'release'] },
    { ...FENCED[2]!, kinds: ['renew'] },
  ];

  it.each(RACES)('$name: 500 races, each with exactly one winner', async (kase) => {
    const actions = actionsOn(kase.config());
    const outcomes = { forced: 0, holder: 0 };
    const problems: string[] = [];
    const lost = (error: unknown) => {
      if (error instanceof LeaseLostError) return false;
      throw error;
    };
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async (_, worker) => {
        const client = kase.client();
        const { leaseKey, sourceKey } = kase.keys(`race-${worker}-${uid()}`);
        for (let i = worker; i < ITERATIONS; i += CONCURRENCY) {
          const lease = await client.acquire(leaseKey, { holder: 'racer', ttlMs: kase.ttlMs, waitMs: 5_000 });
          if (!lease) {
            problems.push(`iteration ${i}: no grant`);
            continue;
          }
          const kind = kase.kinds[i % kase.kinds.length]!;
          const holderMove = kind === 'renew' ? client.renew(lease).then(() => true, lost) : client.release(lease);
          const force = actions
            .execute({ action: 'force-expire', key: sourceKey, expectedHolder: lease.holder, expectedToken: lease.token.toString() }, deadline())
            .then(() => true, (error: unknown) => (error instanceof ForceConflictError ? false : Promise.reject(error)));
          const [holderMoved, forced] = await Promise.all([holderMove, force]);
          let holderWon = holderMoved;
          if (kind === 'renew') {
            holderWon = await client.renew(lease).then(() => true, lost);
            if (!holderMoved && !forced) problems.push(`iteration ${i}: the renew failed without a force`);
            if (holderWon) await client.release(lease);
          }
          if (forced === holderWon) problems.push(`iteration ${i} (${kind}): ${forced ? 'both the force and the holder won' : 'neither won'}`);
          outcomes[forced ? 'forced' : 'holder']++;
        }
      }),
    );
    expect(problems).toEqual([]);
    expect(outcomes.forced + outcomes.holder).toBe(ITERATIONS);
    expect(outcomes.forced).toBeGreaterThan(0);
    if (kase.kinds.includes('release')) expect(outcomes.holder).toBeGreaterThan(0);
  }, 60_000);
});
