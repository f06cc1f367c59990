// Canary leases on real servers: a collector that owns a Redis, an etcd and a PostgreSQL source
// configured with `canary` holds each canary with lib/lease, and its round trips reach the
// store (minute, hour and day percentiles as GET /api/v1/sources shows them), /metrics
// (leasehold_canary_renew_seconds) and the alert engine, while the canary's key is left out of
// the source's leases. Through a loopback proxy that adds 300 ms, slow_renewals fires well
// within a 3 s lease's TTL; a proxy that swallows every byte makes a renewal fail and fires it too.
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SourceConfig } from '../../lib/config';
import type { Collector } from '../../lib/collector';
import { openAlertsOf } from '../../lib/db/alerts';
import { openStore, type Store } from '../../lib/db/store';
import { createLeaseClient } from '../../lib/lease';
import { renderMetrics } from '../../lib/metrics';
import { canaryRegistry, canaryViews } from '../../lib/queries/canary';
import { testCollector } from '../support/collector';
import { createPostgresDatabase, type TestDatabase } from '../support/databases';
import { testServices } from '../support/services';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';

const services = testServices();
const u = randomBytes(3).toString('hex');

let db: TestDatabase & { url: string };
let store: Store;
const collectors: Collector[] = [];
const proxies: TcpProxy[] = [];

beforeAll(async () => {
  db = await createPostgresDatabase('lh_canary');
  store = await openStore({ kind: 'postgres', url: db.url });
  // The PostgreSQL source's lease table, in Leasehold's layout, in the test database itself.
  const client = createLeaseClient({ backend: 'postgres', url: db.url, table: `leases_${u}` });
  await client.inspect('nothing');
  await client.close();
});
afterEach(async () => {
  await Promise.all(collectors.splice(0).map((c) => c.stop()));
  await Promise.all(proxies.splice(0).map((p) => p.close()));
});
afterAll(async () => {
  await store.close();
  await db.drop();
});

function collect(sources: SourceConfig[]): Collector {
  const collector = testCollector(store, sources, { pollMs: 500, alerts: { allowCidrs: ['127.0.0.1/32'] } });
  collectors.push(collector);
  return collector;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
async function until<T>(what: string, check: () => Promise<T | null | undefined | false>, timeoutMs = 10_000): Promise<T> {
  const end = performance.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

const redisUrlVia = (port: number) => {
  const url = new URL(services.redisUrl);
  url.port = String(port);
  return url.toString();
};

const SOURCES = (): SourceConfig[] => [
  { name: `redis-${u}`, backend: 'redis', urls: [services.redisUrl], match: [`canary-${u}:*`], fenceSuffix: ':fence', keyspaceNotifications: 'auto', canary: { key: `canary-${u}:probe`, ttlMs: 2_000, everyMs: 200 } },
  { name: `etcd-${u}`, backend: 'etcd', endpoints: services.etcdEndpoints, prefixes: [`/canary-${u}/`], canary: { key: `/canary-${u}/probe`, ttlMs: 4_000, everyMs: 200 } },
  { name: `pg-${u}`, backend: 'postgres', url: db.url, tables: [{ table: `leases_${u}`, format: 'leasehold' }], advisoryLocks: false, canary: { key: 'canary', ttlMs: 2_000, everyMs: 200 } },
];

describe('canary leases', () => {
  it('times every call on Redis, etcd and PostgreSQL, in the store and /metrics, and keeps the canary out of the leases', async () => {
    const sources = SOURCES();
    // One lease of the user's on each source, beside the canary, for 30 s.
    const users = [
      { client: createLeaseClient({ backend: 'redis', urls: [services.redisUrl] }), key: `canary-${u}:job`, observed: `canary-${u}:job` },
      { client: createLeaseClient({ backend: 'etcd', endpoints: services.etcdEndpoints }), key: `/canary-${u}/job`, observed: `/canary-${u}/job` },
      { client: createLeaseClient({ backend: 'postgres', url: db.url, table: `leases_${u}` }), key: 'job', observed: `leases_${u}/job` },
    ];
    for (const user of users) expect(await user.client.acquire(user.key, { holder: 'worker', ttlMs: 30_000 })).not.toBeNull();
    const startedAt = performance.now();
    collect(sources);
    const config = { sources };
    const views = await until(
      'ten renewals of each canary in the store',
      async () => {
        const views = await canaryViews(store, config, Date.now());
        return [...views.values()].every((view) => view.calls.renew.minute.count >= 10) ? views : null;
      },
      20_000,
    );
    for (const source of sources) {
      const view = views.get(source.name)!;
      const renew = view.calls.renew;
      console.log(`${source.backend} canary: renew p50 ${renew.minute.p50Ms} ms, p95 ${renew.minute.p95Ms} ms, p99 ${renew.minute.p99Ms} ms, max ${renew.minute.maxMs} ms over ${renew.minute.count}; acquire ${view.calls.acquire.minute.count}`);
      expect(view.calls.acquire.day.count).toBeGreaterThanOrEqual(1);
      // At most one request per everyMs (the rollups written so far lag the calls made, never lead them).
      const calls = view.calls.acquire.day.count + renew.day.count + view.calls.release.day.count;
      expect(calls).toBeLessThanOrEqual(Math.floor((performance.now() - startedAt) / source.canary!.everyMs) + 1);
      expect(renew.minute.failed).toBe(0);
      expect(renew.minute.p50Ms).toBeGreaterThan(0);
      expect(renew.minute.p50Ms!).toBeLessThanOrEqual(renew.minute.p99Ms!);
      expect(renew.minute.p99Ms!).toBeLessThanOrEqual(renew.minute.maxMs!);
      expect(renew.hour.count).toBe(renew.minute.count);
      expect(view.minutes.length).toBeGreaterThanOrEqual(1);
    }
    // Leasehold's own probe is not one of the user's leases; theirs are observed beside it.
    for (const [i, source] of sources.entries()) {
      const keys = await until(`${source.name}'s lease`, async () => {
        const rows = await store.prisma.lease.findMany({ where: { sourceName: source.name }, select: { key: true } });
        return rows.length > 0 ? rows.map((row) => row.key) : null;
      });
      expect(keys).toEqual([users[i]!.observed]);
    }
    await Promise.all(users.map((user) => user.client.close()));
    const text = await renderMetrics();
    for (const source of sources) {
      expect(text).toMatch(new RegExp(`^leasehold_canary_renew_seconds_count\\{source="${source.name}"\\} [1-9]`, 'm'));
      expect(text).toMatch(new RegExp(`^leasehold_canary_calls_total\\{call="acquire",outcome="ok",source="${source.name}"\\} 1$`, 'm'));
    }
    // The store's view, on /metrics in every process.
    const fromStore = await (await canaryRegistry(store, config, Date.now())).metrics();
    for (const source of sources) {
      expect(fromStore).toMatch(new RegExp(`^leasehold_canary_renew_quantile_seconds\\{quantile="0.99",source="${source.name}",window="1m"\\} 0\\.\\d+$`, 'm'));
      expect(fromStore).toMatch(new RegExp(`^leasehold_canary_renewal_failures\\{source="${source.name}",window="1h"\\} 0$`, 'm'));
    }
    expect(await openAlertsOf(store, sources[0]!.name)).toEqual([]);
  }, 40_000);

  it('fires slow_renewals within a 3 s TTL when a proxy adds 300 ms to Redis, while a lease held through it stays held', async () => {
    const proxy = await startTcpProxy('127.0.0.1', Number(new URL(services.redisUrl).port));
    proxies.push(proxy);
    const name = `slow-${u}`;
    const source: SourceConfig = { name, backend: 'redis', urls: [redisUrlVia(proxy.port)], match: [`slow-${u}:*`], fenceSuffix: ':fence', keyspaceNotifications: 'off', canary: { key: `slow-${u}:canary`, ttlMs: 1_000, everyMs: 200 } };
    collect([source]);
    // A real lease with a 3 s TTL, held through the same proxy.
    const holder = createLeaseClient({ backend: 'redis', urls: [redisUrlVia(proxy.port)] });
    let lease = await holder.acquire(`slow-${u}:job`, { holder: 'worker', ttlMs: 3_000 });
    expect(lease).not.toBeNull();
    let renewing = true;
    const renewals = (async () => {
      while (renewing) {
        await sleep(1_000);
        lease = await holder.renew(lease!);
      }
    })();
    await until('canary renewals', async () => ((await canaryViews(store, { sources: [source] }, Date.now())).get(name)!.calls.renew.minute.count > 3 ? true : null));
    expect(await openAlertsOf(store, name)).toEqual([]);

    proxy.delay(300);
    const slowFrom = performance.now();
    const alert = await until('slow_renewals', async () => (await openAlertsOf(store, name)).find((a) => a.rule.type === 'slow_renewals'), 3_000);
    const firedAfterMs = performance.now() - slowFrom;
    console.log(`slow_renewals fired ${Math.round(firedAfterMs)} ms after the proxy began adding 300 ms: ${alert.summary}`);
    expect(firedAfterMs).toBeLessThan(3_000);
    expect(alert.summary).toMatch(/at p99 over the last minute/);
    // The real lease, renewed every second through the slow proxy, is still held: the alert came first.
    renewing = false;
    await renewals;
    expect(await openAlertsOf(store, name)).toEqual([expect.objectContaining({ rule: expect.objectContaining({ type: 'slow_renewals' }) })]);
    await Promise.all(collectors.splice(0).map((c) => c.stop()));
    await holder.release(lease!);
    await holder.close();
  }, 30_000);

  it('fires slow_renewals when a canary renewal gets no answer', async () => {
    const proxy = await startTcpProxy('127.0.0.1', Number(new URL(services.redisUrl).port));
    proxies.push(proxy);
    const name = `dead-${u}`;
    const source: SourceConfig = { name, backend: 'redis', urls: [redisUrlVia(proxy.port)], match: [`dead-${u}:*`], fenceSuffix: ':fence', keyspaceNotifications: 'off', canary: { key: `dead-${u}:canary`, ttlMs: 1_000, everyMs: 200 } };
    collect([source]);
    await until('canary renewals', async () => ((await canaryViews(store, { sources: [source] }, Date.now())).get(name)!.calls.renew.minute.count > 3 ? true : null));
    proxy.partition(true);
    const alert = await until('slow_renewals', async () => (await openAlertsOf(store, name)).find((a) => a.rule.type === 'slow_renewals'), 5_000);
    expect(alert.summary).toMatch(/a renewal of its canary got no answer/);
    proxy.partition(false);
    proxy.reset();
    const view = await until('a failed renewal counted', async () => {
      const v = (await canaryViews(store, { sources: [source] }, Date.now())).get(name)!;
      return v.calls.renew.minute.failed > 0 ? v : null;
    });
    expect(view.calls.renew.minute.failed).toBeGreaterThanOrEqual(1);
  }, 30_000);
});
