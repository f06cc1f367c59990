// The collector on real servers, with a PostgreSQL store: what it records when holders are
// killed, release, or their backend goes away, and that it invents nothing.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SourceConfig } from '../../lib/config';
import type { Collector } from '../../lib/collector';
import { openStore, type Store } from '../../lib/db/store';
import type { LeaseClientOptions } from '../../lib/lease';
import { renderMetrics } from '../../lib/metrics';
import { testCollector } from '../support/collector';
import { forkHolder, type HolderOptions } from '../support/holder-process';
import { createPostgresDatabase, type TestDatabase } from '../support/databases';
import { startRedisServer, type RedisServer } from '../support/redis-servers';
import { testServices } from '../support/services';

const services = testServices();
const unique = () => randomBytes(3).toString('hex');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let db: TestDatabase & { url: string };
let store: Store;
const children: ChildProcess[] = [];
const collectors: Collector[] = [];

beforeAll(async () => {
  db = await createPostgresDatabase('lh_collector');
  store = await openStore({ kind: 'postgres', url: db.url });
});
afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  await Promise.all(collectors.splice(0).map((c) => c.stop()));
});
afterAll(async () => {
  await store.close();
  await db.drop();
});

function collect(sources: SourceConfig[], pollMs = 200): Collector {
  const collector = testCollector(store, sources, { pollMs });
  collectors.push(collector);
  return collector;
}

/** Starts a lease holder process; resolves with what it holds once it holds it. */
const holder = (lease: LeaseClientOptions, key: string, name: string, options: HolderOptions) => forkHolder(children, lease, key, name, options);

const events = (leaseId: string) =>
  store.prisma.leaseEvent.findMany({ where: { leaseId }, orderBy: { seq: 'asc' } }).then((rows) =>
    rows.map((r) => ({ type: r.type, holder: r.holder, previousHolder: r.previousHolder, gapMs: r.gapMs === null ? null : Number(r.gapMs), at: r.at, detail: r.detail })),
  );
const sourceEvents = (name: string) => store.prisma.sourceEvent.findMany({ where: { sourceName: name }, orderBy: { seq: 'asc' } });

describe('collector', () => {
  it('a killed holder shows as expired (a missed renewal), then acquired by the next contender with the gap', async () => {
    const prefix = `col${unique()}:`;
    const key = `${prefix}digest`;
    const redisLease: LeaseClientOptions = { backend: 'redis', urls: [services.redisUrl] };
    collect([{ name: 'r1', backend: 'redis', urls: [services.redisUrl], match: [`${prefix}*`], fenceSuffix: ':fence', keyspaceNotifications: 'auto' }]);
    const first = holder(redisLease, key, 'first', { ttlMs: 1_500, renewEveryMs: 300 });
    const a = await first.held;
    await expect.poll(async () => (await store.prisma.lease.findUnique({ where: { id: `r1/${key}` } }))?.holder, { timeout: 5_000 }).toBe(a.holder);
    const second = holder(redisLease, key, 'second', { ttlMs: 1_500, renewEveryMs: 300 });
    await sleep(500);
    first.child.kill('SIGKILL');
    const killedAt = Date.now();
    const b = await second.held;
    await expect.poll(async () => (await events(`r1/${key}`)).length, { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
    const history = await events(`r1/${key}`);
    expect(history.map((e) => [e.type, e.holder, e.previousHolder])).toEqual([
      ['acquired', a.holder, null],
      ['expired', null, a.holder],
      ['acquired', b.holder, a.holder],
    ]);
    // It expired a TTL after its last renewal, not before the kill; the gap is the contender's retry delay.
    expect(history[1]!.at.getTime()).toBeGreaterThan(killedAt);
    expect(history[1]!.at.getTime()).toBeLessThan(killedAt + 1_500 + 300);
    expect(history[2]!.gapMs).toBeGreaterThanOrEqual(0);
    expect(history[2]!.gapMs).toBeLessThan(500);
    expect(history[2]!.detail).toMatchObject({ cause: 'expired' });
  }, 30_000);

  it('an etcd leader killed: the lease is proven expired, and the queued candidate takes over when etcd revokes it', async () => {
    const prefix = `col${unique()}/`;
    const key = `${prefix}leader`;
    const etcdLease: LeaseClientOptions = { backend: 'etcd', endpoints: services.etcdEndpoints };
    collect([{ name: 'e1', backend: 'etcd', endpoints: services.etcdEndpoints, prefixes: [prefix] }]);
    const first = holder(etcdLease, key, 'first', { ttlMs: 3_000, renewEveryMs: 500, election: true });
    const a = await first.held;
    const second = holder(etcdLease, key, 'second', { ttlMs: 3_000, renewEveryMs: 500, election: true });
    // Queued behind the leader, as the collector sees it (a slow start of the second process
    // under load would otherwise make this an expiry and a later acquisition, with a gap).
    await expect.poll(async () => (await store.prisma.lease.findUnique({ where: { id: `e1/${key}` } }))?.candidates, { timeout: 10_000 }).toHaveLength(1);
    first.child.kill('SIGKILL');
    const b = await second.held;
    await expect.poll(async () => (await events(`e1/${key}`)).length, { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
    const history = await events(`e1/${key}`);
    expect(history.map((e) => [e.type, e.holder, e.previousHolder])).toEqual([
      ['acquired', a.holder, null],
      ['expired', null, a.holder],
      ['acquired', b.holder, a.holder],
    ]);
    // The candidate leads when etcd's lessor (looking every 500 ms) revokes the old lease and
    // deletes its key; until then nobody could lead: that is the gap, never negative, never
    // more than the lessor's round and the reads that see it.
    expect(history[2]!.gapMs).toBeGreaterThanOrEqual(0);
    expect(history[2]!.gapMs).toBeLessThanOrEqual(1_500);
  }, 30_000);

  it('a holder that releases shows released, not expired', async () => {
    const prefix = `col${unique()}:`;
    const key = `${prefix}job`;
    collect([{ name: 'r2', backend: 'redis', urls: [services.redisUrl], match: [`${prefix}*`], fenceSuffix: ':fence', keyspaceNotifications: 'auto' }]);
    const only = holder({ backend: 'redis', urls: [services.redisUrl] }, key, 'polite', { ttlMs: 30_000, renewEveryMs: 5_000 });
    const a = await only.held;
    await expect.poll(async () => (await events(`r2/${key}`)).length, { timeout: 5_000 }).toBe(1);
    only.child.kill('SIGTERM');
    await only.exited;
    await expect.poll(async () => (await events(`r2/${key}`)).map((e) => e.type), { timeout: 5_000 }).toEqual(['acquired', 'released']);
    expect((await events(`r2/${key}`))[1]!.previousHolder).toBe(a.holder);
    expect(await store.prisma.lease.findUnique({ where: { id: `r2/${key}` } })).toMatchObject({ state: 'free', lastHolder: a.holder });
  }, 30_000);

  it('records renewals: the raw ring with interval and margin, the lease row, and the minute rollup when it stops', async () => {
    const prefix = `col${unique()}:`;
    const key = `${prefix}renewing`;
    const collector = collect([{ name: 'r4', backend: 'redis', urls: [services.redisUrl], match: [`${prefix}*`], fenceSuffix: ':fence', keyspaceNotifications: 'auto' }]);
    const only = holder({ backend: 'redis', urls: [services.redisUrl] }, key, 'steady', { ttlMs: 3_000, renewEveryMs: 400 });
    await only.held;
    await expect.poll(() => store.prisma.renewalSample.count({ where: { leaseId: `r4/${key}` } }), { timeout: 10_000 }).toBeGreaterThanOrEqual(5);
    const samples = await store.prisma.renewalSample.findMany({ where: { leaseId: `r4/${key}` }, orderBy: { seq: 'asc' } });
    // Renewed every 400 ms with a 3 s TTL: about 2.6 s left at each renewal. The holder is a
    // process of its own, whose timer a busy machine may delay: each renewal is judged by what
    // it must be (seen once, not twice: over 150 ms apart; before its lease ran out), and the
    // typical one by the holder's schedule.
    const later = samples.slice(1).map((s) => ({ intervalMs: Number(s.intervalMs), marginMs: Number(s.marginMs) }));
    for (const sample of later) {
      expect(sample.intervalMs).toBeGreaterThan(150);
      expect(sample.intervalMs).toBeLessThan(3_000);
      expect(sample.marginMs).toBeGreaterThan(0);
      expect(sample.marginMs).toBeLessThanOrEqual(3_000);
      expect(sample.intervalMs + sample.marginMs).toBeGreaterThan(2_500); // what had passed plus what was left: about the TTL
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    expect(median(later.map((s) => s.intervalMs))).toBeGreaterThan(300);
    expect(median(later.map((s) => s.intervalMs))).toBeLessThan(700);
    expect(median(later.map((s) => s.marginMs))).toBeGreaterThan(2_200);
    const lease = await store.prisma.lease.findUniqueOrThrow({ where: { id: `r4/${key}` } });
    expect(lease.renewedAt!.getTime()).toBeGreaterThan(Date.now() - 3_000);
    expect(lease.expiresAt!.getTime()).toBeGreaterThan(Date.now());
    // Only state changes are events: renewals are not. They are counted on /metrics.
    expect((await events(`r4/${key}`)).map((e) => e.type)).toEqual(['acquired']);
    const renewalsCounted = Number(/^leasehold_renewals_total\{source="r4"\} (\d+)$/m.exec(await renderMetrics())?.[1] ?? 0);
    expect(renewalsCounted).toBeGreaterThanOrEqual(4);
    await collector.stop();
    const rollups = await store.prisma.renewalRollup.findMany({ where: { leaseId: `r4/${key}` } });
    expect(rollups.reduce((sum, r) => sum + r.count, 0)).toBeGreaterThanOrEqual(samples.length);
  }, 30_000);

  it('a PostgreSQL lease table, polled for what changed: each renewal seen once with its interval and margin, and every poll timed', async () => {
    const table = `col_${unique()}`;
    const key = 'renewing';
    const lease = { backend: 'postgres' as const, url: db.url, table };
    const only = holder(lease, key, 'steady', { ttlMs: 3_000, renewEveryMs: 400 }); // its client makes the table
    await only.held;
    const collector = collect([{ name: 'p4', backend: 'postgres', url: db.url, tables: [{ table, format: 'leasehold' }], advisoryLocks: false }]);
    const polls = async () => Number(/^leasehold_poll_duration_seconds_count\{source="p4"\} (\d+)$/m.exec(await renderMetrics())?.[1] ?? 0);
    await expect.poll(() => store.prisma.renewalSample.count({ where: { leaseId: `p4/${table}/${key}` } }), { timeout: 10_000 }).toBeGreaterThanOrEqual(6);
    const samples = await store.prisma.renewalSample.findMany({ where: { leaseId: `p4/${table}/${key}` }, orderBy: { seq: 'asc' } });
    // Polled every 200 ms, renewed every 400 ms with a 3 s TTL: each renewal is seen once, at
    // the first poll after it, so its interval is about 400 ms and its margin about 2.6 s.
    const later = samples.slice(1).map((s) => ({ intervalMs: Number(s.intervalMs), marginMs: Number(s.marginMs) }));
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    expect(median(later.map((s) => s.intervalMs))).toBeGreaterThan(250);
    expect(median(later.map((s) => s.intervalMs))).toBeLessThan(700);
    expect(median(later.map((s) => s.marginMs))).toBeGreaterThan(2_200);
    expect((await events(`p4/${table}/${key}`)).map((e) => e.type)).toEqual(['acquired']);
    // Each poll reads only what changed, and each is timed, as full reads are.
    const before = await polls();
    await sleep(1_500);
    expect((await polls()) - before).toBeGreaterThanOrEqual(4);
    expect((await store.prisma.source.findUniqueOrThrow({ where: { name: 'p4' } })).lastPollMs).not.toBeNull();
    await collector.stop();
  }, 30_000);

  describe('a Redis stopped for 10 s', () => {
    let redis: RedisServer;
    beforeAll(async () => {
      redis = await startRedisServer(16390);
    });
    afterAll(() => redis.stop());

    it('turns its source down and its leases stale, then up again, and invents no event', async () => {
      const key = `stop:${unique()}`;
      collect([{ name: 'r3', backend: 'redis', urls: [redis.url], match: ['stop:*'], fenceSuffix: ':fence', keyspaceNotifications: 'off' }]);
      const only = holder({ backend: 'redis', urls: [redis.url] }, key, 'patient', { ttlMs: 60_000, renewEveryMs: 20_000 });
      await only.held;
      await expect.poll(async () => (await events(`r3/${key}`)).length, { timeout: 5_000 }).toBe(1);
      redis.process.kill('SIGSTOP');
      try {
        await expect.poll(async () => (await store.prisma.source.findUnique({ where: { name: 'r3' } }))?.status, { timeout: 15_000 }).toBe('down');
        expect(await store.prisma.lease.findUnique({ where: { id: `r3/${key}` } })).toMatchObject({ stale: true, state: 'held' });
        await sleep(10_000);
      } finally {
        redis.process.kill('SIGCONT');
      }
      await expect.poll(async () => (await store.prisma.source.findUnique({ where: { name: 'r3' } }))?.status, { timeout: 15_000 }).toBe('up');
      await expect.poll(async () => (await store.prisma.lease.findUnique({ where: { id: `r3/${key}` } }))?.stale, { timeout: 5_000 }).toBe(false);
      expect((await sourceEvents('r3')).map((e) => e.type)).toEqual(['source_down', 'source_up']);
      expect((await events(`r3/${key}`)).map((e) => e.type)).toEqual(['acquired']);
    }, 60_000);
  });
});
