// Chaos on Redis: the server killed for 10 s and restarted (it keeps its keys on disk, as a
// production Redis with appendonly does, so the leases outlive the outage); keyspace
// notifications switched off while observed; a source behind a loopback proxy that adds 2 s
// of latency, then drops its connections half-way through an operator's action.
import Redis from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SourceConfig } from '../../lib/config';
import { startRedisServer, type RedisServer } from '../support/redis-servers';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import { sleep, startWorld, uid, type Holder, type Layout, type World } from './world';

const run = `chaos${uid()}`;
let redis: RedisServer;
/** The far source's server: one of the suite's own, so that what a slow SCAN costs does not depend on what other suites left in a shared Redis. */
let farRedis: RedisServer;
let proxy: TcpProxy;
let world: World;
let direct: Redis;
let farDirect: Redis;

const layout = (): Layout => ({ source: 'redis', client: { backend: 'redis', urls: [redis.url] }, key: (l) => `${run}:lease:${l}`, leaseId: (k) => `redis/${k}` });
const farLayout = (): Layout => ({ source: 'far', client: { backend: 'redis', urls: [farRedis.url] }, key: (l) => `${run}:far:${l}`, leaseId: (k) => `far/${k}` });

beforeAll(async () => {
  redis = await startRedisServer(16411, ['--appendonly', 'yes', '--appendfsync', 'always', '--notify-keyspace-events', 'KEA']);
  farRedis = await startRedisServer(16415);
  proxy = await startTcpProxy('127.0.0.1', farRedis.port);
  const sources: SourceConfig[] = [
    { name: 'redis', backend: 'redis', urls: [redis.url], match: [`${run}:lease:*`], fenceSuffix: ':fence', keyspaceNotifications: 'auto' },
    { name: 'far', backend: 'redis', urls: [`redis://127.0.0.1:${proxy.port}`], match: [`${run}:far:*`], fenceSuffix: ':fence', keyspaceNotifications: 'off' },
  ] as SourceConfig[];
  world = await startWorld({ sources });
  for (const label of ['digest', 'billing', 'reports']) await world.hold(layout(), label);
  for (const label of ['mailer', 'indexer']) await world.hold(farLayout(), label);
  await world.observed(world.holders);
  direct = new Redis(redis.url).on('error', () => {});
  farDirect = new Redis(farRedis.url).on('error', () => {});
});

afterAll(async () => {
  await world?.stop();
  direct?.disconnect();
  farDirect?.disconnect();
  await proxy?.close();
  await redis?.stop();
  await farRedis?.stop();
});

const fenceOf = async (client: Redis, h: Holder) => BigInt((await client.get(`${h.key}:fence`)) ?? '0');

describe('chaos: Redis', () => {
  it('killed for 10 s and restarted: stale with the last read, nothing invented, forced once', async () => {
    const victim = await world.hold(layout(), 'victim');
    await world.observed([victim]);
    const fault = world.fault('Redis killed for 10 s, restarted', { source: 'redis', down: true });
    await fault.begin();
    const began = Date.now();
    await redis.kill();
    await fault.whileDown();
    // The operator acts on what the console shows: the backend does not answer, so the outcome is unknown.
    expect(await world.forceExpire(victim)).toBe('unknown');
    await sleep(Math.max(0, 10_000 - (Date.now() - began)));
    await redis.restart();
    fault.recovered();
    // It was not applied: the holder keeps its lease (its renewals go on), and the token is where it was.
    await world.observed([victim]);
    await sleep(1_500);
    expect(victim.lost).toBe(false);
    const tokenBefore = await fenceOf(direct, victim);
    expect(tokenBefore).toBe(victim.lease.token);
    // An operator who saw an older token is refused; one who saw this one expires it, once.
    expect(await world.forceExpire(victim, { holder: victim.lease.holder, token: (victim.lease.token - 1n).toString() })).toBe('refused');
    expect(await world.forceExpire(victim)).toBe('done');
    expect(await fenceOf(direct, victim)).toBe(tokenBefore + 1n);
    await fault.check();
  });

  it('keyspace notifications switched off while observed: changes still seen by polling, nothing invented', async () => {
    const fault = world.fault('Redis keyspace notifications switched off', { source: 'redis', down: false });
    await fault.begin();
    await direct.config('SET', 'notify-keyspace-events', '');
    // A lease taken and one released while nothing is pushed: both seen by the polls.
    const late = await world.hold(layout(), 'late');
    await world.observed([late], 5_000);
    const gone = await world.hold(layout(), 'gone');
    await world.observed([gone], 5_000);
    expect(await gone.client.release(gone.lease)).toBe(true);
    await gone.stop();
    world.holders.splice(world.holders.indexOf(gone), 1);
    await expect
      .poll(async () => world.store.prisma.leaseEvent.count({ where: { leaseId: gone.leaseId, type: 'released' } }), { timeout: 5_000, interval: 100 })
      .toBe(1);
    await direct.config('SET', 'notify-keyspace-events', 'KEA');
    fault.recovered();
    await fault.check();
  });

  it('behind a proxy that adds 2 s of latency, then drops its connections half-way through a force-expire', async () => {
    const victim = await world.hold(farLayout(), 'victim');
    await world.observed([victim]);
    const fault = world.fault('Redis source behind a proxy: +2 s latency, then connections dropped', { source: 'far', down: true });
    await fault.begin();
    const tokenBefore = await fenceOf(farDirect, victim);
    proxy.delay(1_000); // each way: 2 s more per round trip
    await sleep(4_000);
    // Slow, but read within its deadline: not down, nothing stale, nothing invented.
    expect((await world.store.prisma.source.findUniqueOrThrow({ where: { name: 'far' } })).status).toBe('up');
    // The operator's force-expire goes through the same slow link; once the backend has applied
    // it, the connections are dropped (and stay dropped a while) before its answer comes back.
    const acting = world.forceExpire(victim);
    await expect.poll(() => fenceOf(farDirect, victim), { timeout: 15_000, interval: 20 }).toBe(tokenBefore + 1n);
    proxy.partition(true);
    proxy.reset();
    expect(await acting).toBe('unknown');
    await fault.whileDown();
    proxy.delay(0);
    proxy.partition(false);
    proxy.reset();
    fault.recovered();
    // Applied once, not twice: the token moved by one, and the holder lost its lease.
    await sleep(1_500);
    expect(await fenceOf(farDirect, victim)).toBe(tokenBefore + 1n);
    expect(victim.lost).toBe(true);
    await fault.check();
  });
});
