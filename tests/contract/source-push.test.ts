// Push sources: a change is announced at once (Redis keyspace notifications, etcd watch),
// a source without push says so by not pushing, and an etcd watch that is cut off or falls
// behind a compaction reports the gap instead of pretending nothing was missed.
import { randomBytes } from 'node:crypto';
import { Etcd3 } from 'etcd3';
import Redis from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createLeaseClient } from '../../lib/lease';
import { createLogger } from '../../lib/log';
import { createSource } from '../../lib/sources/registry';
import { PROVEN_ENDED, RENEWED } from '../../lib/sources/etcd/expiry-proof';
import type { ChangeHint, LeaseSource } from '../../lib/sources/types';
import { testServices } from '../support/services';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';

const services = testServices();
const unique = () => randomBytes(3).toString('hex');
const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function watch(source: LeaseSource) {
  const hints: (ChangeHint & { at: number })[] = [];
  const stop = new AbortController();
  const running = source.watch!((hint) => hints.push({ ...hint, at: performance.now() }), stop.signal);
  cleanups.push(async () => {
    stop.abort();
    await running;
    await source.close();
  });
  return { hints, running };
}

/** A Redis source over `prefix*` with keyspace notifications, watched (subscribed by the time this resolves), and a client to write with. */
async function watchedRedis(prefix: string) {
  const source = createSource({ name: 'r', backend: 'redis', urls: [services.redisUrl], match: [`${prefix}*`], fenceSuffix: ':fence', keyspaceNotifications: 'auto' }, 1_000);
  const { hints } = watch(source);
  await new Promise((resolve) => setTimeout(resolve, 300)); // subscribed
  const redis = new Redis(services.redisUrl);
  cleanups.push(() => redis.disconnect());
  return { source, hints, redis };
}

describe('push', () => {
  it('redis with keyspace notifications: a SET is announced within a second, and the hint re-reads it', async () => {
    const prefix = `push${unique()}:`;
    const { source, hints, redis } = await watchedRedis(prefix);
    const written = performance.now();
    await redis.set(`${prefix}lock`, 'pushed-holder', 'PX', 30_000);
    await expect.poll(() => hints.length, { timeout: 2_000 }).toBeGreaterThan(0);
    expect(hints[0]!.at - written).toBeLessThan(1_000);
    const { observations, covered } = await source.readKeys!(hints[0]!.keys!, AbortSignal.timeout(5_000));
    expect(covered).toEqual([`${prefix}lock`]);
    expect(observations[0]).toMatchObject({ key: `${prefix}lock`, holder: 'pushed-holder' });
  });

  it('redis: a SET, a fence increment, a DEL and an expiry are urgent hints (read on their own); a PEXPIRE is a renewal, not', async () => {
    const prefix = `urgent${unique()}:`;
    const { hints, redis } = await watchedRedis(prefix);
    const told = async (key: string, write: () => Promise<unknown>) => {
      const before = hints.length;
      await write();
      await expect.poll(() => hints.length, { timeout: 2_000 }).toBeGreaterThan(before);
      await new Promise((resolve) => setTimeout(resolve, 100)); // a SET with PX sends two events: set, then expire
      const after = hints.slice(before);
      expect(after.every((h) => h.keys?.length === 1 && h.keys[0] === key)).toBe(true);
      return after.some((h) => h.urgent === true);
    };
    const lock = `${prefix}lock`;
    expect(await told(lock, () => redis.incr(`${lock}:fence`))).toBe(true);
    expect(await told(lock, () => redis.set(lock, 'holder', 'PX', 30_000))).toBe(true);
    expect(await told(lock, () => redis.pexpire(lock, 30_000))).toBe(false);
    expect(await told(lock, () => redis.del(lock))).toBe(true);
    // An expiry: the key set to live 400 ms (set, then expire), then gone on its own (expired).
    expect(await told(`${prefix}short`, () => redis.set(`${prefix}short`, 'holder', 'PX', 400))).toBe(true);
    expect(await told(`${prefix}short`, () => new Promise((resolve) => setTimeout(resolve, 300)))).toBe(true);
  });

  it('redis with notifications off in the config: no push, polling only, said in the logger it was handed', async () => {
    let written = '';
    const log = createLogger({ level: 'debug', destination: { write: (chunk: string) => void (written += chunk) } });
    const source = createSource({ name: 'r', backend: 'redis', urls: [services.redisUrl], match: ['x*'], fenceSuffix: ':fence', keyspaceNotifications: 'off' }, 1_000, null, undefined, { log });
    const { running } = watch(source);
    // watch() resolves at once: there is nothing to push.
    await expect(Promise.race([running.then(() => 'returned'), new Promise((r) => setTimeout(() => r('still running'), 500))])).resolves.toBe('returned');
    const lines = written.split('\n').filter(Boolean).map((line) => JSON.parse(line) as { source?: string; msg: string });
    expect(lines).toContainEqual(expect.objectContaining({ source: 'r', msg: expect.stringContaining('no keyspace events from') }));
  });

  it('etcd watch: an acquisition is announced within a second', async () => {
    const prefix = `push${unique()}/`;
    const source = createSource({ name: 'e', backend: 'etcd', endpoints: services.etcdEndpoints, prefixes: [prefix] }, 1_000);
    const { hints } = watch(source);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const client = createLeaseClient({ backend: 'etcd', endpoints: services.etcdEndpoints });
    cleanups.push(() => client.close());
    const written = performance.now();
    await client.acquire(`${prefix}job`, { holder: 'w', ttlMs: 5_000 });
    await expect.poll(() => hints.length, { timeout: 2_000 }).toBeGreaterThan(0);
    expect(hints[0]!.at - written).toBeLessThan(1_000);
    expect(hints[0]!.keys).toEqual([`${prefix}job`]);
  });

  it('etcd watch cut off, back, and cut off again: each cut is said, and the watch goes on after each', async () => {
    const prefix = `cut${unique()}/`;
    const target = new URL(services.etcdEndpoints[0]!);
    const proxy: TcpProxy = await startTcpProxy(target.hostname, Number(target.port));
    cleanups.push(() => proxy.close());
    const source = createSource({ name: 'e', backend: 'etcd', endpoints: [`http://127.0.0.1:${proxy.port}`], prefixes: [prefix] }, 1_000);
    const { hints } = watch(source);
    const etcd = new Etcd3({ hosts: services.etcdEndpoints });
    cleanups.push(() => etcd.close());
    await new Promise((resolve) => setTimeout(resolve, 500));
    const cuts = () => hints.filter((h) => h.reason === 'the etcd watch was cut off').length;
    for (const round of [1, 2]) {
      // Watching: a put is announced.
      const key = `${prefix}k${round}`;
      await expect
        .poll(
          async () => {
            await etcd.put(key).value(String(round));
            return hints.some((h) => h.keys?.includes(key));
          },
          { timeout: 20_000, interval: 500 },
        )
        .toBe(true);
      proxy.partition(true);
      proxy.reset();
      await expect.poll(cuts, { timeout: 3_000 }).toBe(round);
      expect(hints.at(-1)).toMatchObject({ full: true, gap: true });
      proxy.partition(false);
      proxy.reset();
    }
  }, 60_000);

  it('etcd watch cut off and behind a compaction: a gap at the cut, and the compaction when it is back', async () => {
    const prefix = `compact${unique()}/`;
    const target = new URL(services.etcdEndpoints[0]!);
    const proxy: TcpProxy = await startTcpProxy(target.hostname, Number(target.port));
    cleanups.push(() => proxy.close());
    const source = createSource({ name: 'e', backend: 'etcd', endpoints: [`http://127.0.0.1:${proxy.port}`], prefixes: [prefix] }, 1_000);
    const { hints } = watch(source);
    const etcd = new Etcd3({ hosts: services.etcdEndpoints });
    cleanups.push(() => etcd.close());
    await new Promise((resolve) => setTimeout(resolve, 500));
    await etcd.put(`${prefix}a`).value('1');
    await expect.poll(() => hints.length, { timeout: 3_000 }).toBeGreaterThan(0);
    // Cut the watch off, write and compact behind its back, then let it reconnect.
    proxy.partition(true);
    proxy.reset();
    // The cut is said at once, before anything is known of what it missed.
    await expect.poll(() => hints.find((h) => h.gap), { timeout: 3_000 }).toMatchObject({ full: true, gap: true, reason: 'the etcd watch was cut off' });
    for (let i = 0; i < 3; i++) await etcd.put(`${prefix}b`).value(String(i));
    const { header } = await etcd.kv.range({ key: Buffer.from(`${prefix}b`) });
    await etcd.kv.compact({ revision: header.revision, physical: true });
    proxy.partition(false);
    proxy.reset(); // connections opened during the partition are stuck: make the client open new ones
    await expect.poll(() => hints.find((h) => h.reason === 'the etcd watch fell behind a compaction'), { timeout: 20_000 }).toMatchObject({ full: true, gap: true });
  }, 40_000);
});

// etcd deletes an expired lease's keys only when its lessor revokes it (every 500 ms), and
// reports TTLs in whole seconds; the source proves the expiry from two readings instead
// (lib/sources/etcd/ttl-proof.ts) and names the lease in a hint. Never before the lease ran out.
describe('etcd expiry proof', () => {
  const etcdSource = (prefix: string) => createSource({ name: 'e', backend: 'etcd', endpoints: services.etcdEndpoints, prefixes: [prefix] }, 1_000);

  async function leaseWithKey(etcd: Etcd3, key: string) {
    const lease = etcd.lease(3, { autoKeepAlive: false });
    await lease.put(key).value('holder-x');
    return lease;
  }

  it('a lease left to run out is named in a hint no earlier than its expiry, and read again it is not held', async () => {
    const prefix = `proof${unique()}/`;
    const etcd = new Etcd3({ hosts: services.etcdEndpoints });
    cleanups.push(() => etcd.close());
    const source = etcdSource(prefix);
    const { hints } = watch(source);
    await new Promise((resolve) => setTimeout(resolve, 300)); // watching
    const lease = await leaseWithKey(etcd, `${prefix}single`);
    const before = await source.snapshot(AbortSignal.timeout(5_000)); // its TTL read: the proof reads are scheduled
    expect(before.observations[0]).toMatchObject({ key: `${prefix}single`, holder: 'holder-x' });
    const sent = performance.now();
    await lease.keepaliveOnce(); // the last renewal: it runs out 3 s after this reached etcd, not before
    // Named by the proof; or, when etcd's lessor revoked the lease first (it does so within
    // 500 ms of the expiry) and the watch saw its key deleted, by the watch (no reason): by then
    // the proof has no key left to name. Either way no earlier than the lease ran out.
    const ended = () => hints.find((h) => h.at > sent + 100 && (h.reason === PROVEN_ENDED || h.reason === undefined) && h.keys?.includes(`${prefix}single`));
    const proven = await expect
      .poll(ended, { timeout: 8_000, interval: 20 })
      .toBeDefined()
      .then(() => ended()!);
    expect(proven.at).toBeGreaterThanOrEqual(sent + 3_000);
    const { observations } = await source.readKeys!([`${prefix}single`], AbortSignal.timeout(5_000));
    // Proven run out (its time past: 0 or less, no earlier than it can have run out) or already
    // revoked (gone): either way not held.
    expect(observations.every((o) => o.remainingMs !== null && o.remainingMs <= 0 && performance.now() + o.remainingMs >= sent + 3_000 - 50)).toBe(true);
  }, 20_000);

  it('an etcd that stops answering while a lease nears its end does not hold the watch when it is stopped', async () => {
    const prefix = `proof${unique()}/`;
    const target = new URL(services.etcdEndpoints[0]!);
    const proxy: TcpProxy = await startTcpProxy(target.hostname, Number(target.port));
    cleanups.push(() => proxy.close());
    const etcd = new Etcd3({ hosts: services.etcdEndpoints });
    cleanups.push(() => etcd.close());
    const source = createSource({ name: 'e', backend: 'etcd', endpoints: [`http://127.0.0.1:${proxy.port}`], prefixes: [prefix] }, 1_000);
    const stop = new AbortController();
    const running = source.watch!(() => {}, stop.signal);
    cleanups.push(() => source.close());
    await new Promise((resolve) => setTimeout(resolve, 300));
    await leaseWithKey(etcd, `${prefix}stuck`);
    await source.snapshot(AbortSignal.timeout(5_000));
    // Its reading can step to 0 from about a second on: the proof reads are going by then.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    proxy.partition(true); // every call from now on hangs: nothing comes back
    await new Promise((resolve) => setTimeout(resolve, 300));
    const stopped = performance.now();
    stop.abort();
    await running;
    expect(performance.now() - stopped).toBeLessThan(4_000);
  }, 20_000);

  it('a lease renewed late but in time, again and again, is never named as run out', async () => {
    const prefix = `proof${unique()}/`;
    const etcd = new Etcd3({ hosts: services.etcdEndpoints });
    cleanups.push(() => etcd.close());
    const source = etcdSource(prefix);
    const { hints } = watch(source);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const lease = await leaseWithKey(etcd, `${prefix}late`);
    await source.snapshot(AbortSignal.timeout(5_000));
    const start = performance.now();
    // Each keepalive 2.5 s after the last: its reading is 0 for half a second every time, so
    // proofs are started and must be broken off by the renewal.
    for (let i = 0; i < 4; i++) {
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      await lease.keepaliveOnce();
    }
    expect(hints.filter((h) => h.at > start && h.reason === PROVEN_ENDED && h.keys?.includes(`${prefix}late`))).toEqual([]);
    // Each renewal was told, though (the collector's expiry estimate kept current).
    expect(hints.filter((h) => h.at > start && h.reason === RENEWED && h.keys?.includes(`${prefix}late`)).length).toBeGreaterThanOrEqual(4);
    const { observations } = await source.readKeys!([`${prefix}late`], AbortSignal.timeout(5_000));
    expect(observations[0]).toMatchObject({ holder: 'holder-x' });
    expect(observations[0]!.remainingMs).toBeGreaterThan(0);
  }, 30_000);
});
