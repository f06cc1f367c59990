// The LeaseSource contract, for every adapter and every layout it must read, on the real
// servers: a held lease is seen with the right holder, token, remaining time and queue;
// once released it is no longer held; a targeted re-read agrees with a full one; an
// unreachable server is SourceUnavailableError, fast.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Etcd3 } from 'etcd3';
import Redis from 'ioredis';
import type { SourceConfig } from '../../lib/config';
import type { Observation } from '../../lib/domain/observe';
import { stateOf } from '../../lib/domain/observe';
import { SourceUnavailableError } from '../../lib/sources/errors';
import { createSource } from '../../lib/sources/registry';
import type { LeaseSource } from '../../lib/sources/types';
import { createPostgresDatabase, type TestDatabase } from '../support/databases';
import { etcdLayouts, makeSource, postgresLayouts, redisLayouts, redlockQuorumLayout, type Layout } from '../support/lease-layouts';
import { startRedisServer, type RedisServer } from '../support/redis-servers';
import { testServices } from '../support/services';
import { zookeeperLayouts } from '../support/zookeeper-layouts';

const services = testServices();
let db: TestDatabase & { url: string };
let quorum: RedisServer[] = [];
const QUORUM_PORTS = [16397, 16398, 16399];

beforeAll(async () => {
  db = await createPostgresDatabase('lh_source');
  quorum = await Promise.all(QUORUM_PORTS.map((port) => startRedisServer(port)));
});
afterAll(async () => {
  await db.drop();
  await Promise.all(quorum.map((s) => s.stop()));
});

const LAYOUTS: Layout[] = [
  ...postgresLayouts(() => db.url),
  ...redisLayouts(() => services.redisUrl),
  redlockQuorumLayout(() => quorum.map((s) => s.url)),
  ...etcdLayouts(() => services.etcdEndpoints[0]!),
  ...zookeeperLayouts(() => services.zookeeper),
];

const find = (observations: Observation[], key: string) => observations.find((o) => o.key === key);
const matches = (actual: string | null | undefined, expected: string | RegExp) =>
  typeof expected === 'string' ? actual === expected : expected.test(actual ?? '');

describe.each(LAYOUTS)('LeaseSource contract: $name', (layout) => {
  let source: LeaseSource;
  beforeAll(async () => {
    await layout.setup?.();
    source = makeSource(layout);
  });
  afterAll(() => source.close());

  it('sees a held lease with its holder, token, remaining time and queue; then sees it released', async () => {
    const held = await layout.hold(`contract-${Math.random().toString(36).slice(2, 8)}`);
    let released = false;
    try {
      const { observations, status } = await source.snapshot(AbortSignal.timeout(10_000));
      expect(status).not.toBeNull();
      const seen = find(observations, held.key);
      expect(seen, `no observation of ${held.key} among ${observations.map((o) => o.key).join(', ')}`).toBeDefined();
      expect(stateOf(seen!)).toBe('held');
      expect(seen!.kind).toBe(held.kind);
      expect(matches(seen!.holder, held.holder), `holder ${seen!.holder}`).toBe(true);
      if (held.token === null) expect(seen!.token).toBeNull();
      else if (held.token === 'any') expect(typeof seen!.token).toBe('bigint');
      else expect(seen!.token).toBe(held.token);
      if (held.ttlMs === null) {
        if (held.kind === 'advisory') expect(seen!.remainingMs).toBeNull();
      } else {
        expect(seen!.remainingMs).toBeGreaterThan(0);
        expect(seen!.remainingMs).toBeLessThanOrEqual(held.ttlMs);
      }
      for (const [index, candidate] of (held.candidates ?? []).entries()) {
        expect(matches(seen!.candidates[index]?.holder, candidate), `candidate ${index}: ${seen!.candidates[index]?.holder}`).toBe(true);
      }

      if (source.readKeys) {
        // A targeted re-read agrees with the full one.
        const again = await source.readKeys([held.key], AbortSignal.timeout(10_000));
        expect(again.covered).toContain(held.key);
        expect(find(again.observations, held.key)).toMatchObject({ holder: seen!.holder, token: seen!.token });
      }

      await held.release();
      released = true;
      await expect
        .poll(async () => {
          const after = find((await source.snapshot(AbortSignal.timeout(10_000))).observations, held.key);
          return after === undefined ? 'gone' : stateOf(after);
        }, { timeout: 10_000 })
        .not.toBe('held');
    } finally {
      if (!released) await held.release().catch(() => {});
    }
  }, 60_000);
});

describe('unreachable sources', () => {
  const dead: SourceConfig[] = [
    { name: 'pg-dead', backend: 'postgres', url: 'postgres://u:secret@127.0.0.1:1/db', tables: [{ table: 'leases', format: 'leasehold' }], advisoryLocks: false },
    { name: 'redis-dead', backend: 'redis', urls: ['redis://:secret@127.0.0.1:1'], match: ['*'], fenceSuffix: ':fence', keyspaceNotifications: 'auto' },
    { name: 'etcd-dead', backend: 'etcd', endpoints: ['http://127.0.0.1:1'], prefixes: ['x/'] },
    { name: 'zookeeper-dead', backend: 'zookeeper', connect: '127.0.0.1:1', paths: ['/x'], digest: { username: 'u', password: 'secret' }, sessionTimeoutMs: 10_000 },
  ];
  it.each(dead)('$backend: SourceUnavailableError within seconds, naming no secret', async (config) => {
    const source = createSource(config, 1_000);
    const started = performance.now();
    try {
      const error = await source.snapshot(AbortSignal.timeout(10_000)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SourceUnavailableError);
      expect((error as Error).message).not.toContain('secret');
      expect(performance.now() - started).toBeLessThan(8_000);
    } finally {
      await source.close();
    }
  });
});

// The read lanes give a full read a deadline of silence (lib/collector/read-lanes.ts): a
// source of many keys that keeps answering is slow, not down. That holds only if the adapters
// say when each round trip answers.
describe('a full read of many round trips tells its progress as each answers', () => {
  const label = Math.random().toString(36).slice(2, 8);

  it('Redis: each SCAN page and each batch of keys read', async () => {
    const redis = new Redis(services.redisUrl);
    const prefix = `progress-${label}:`;
    const source = createSource({ name: 'progress', backend: 'redis', urls: [services.redisUrl], match: [`${prefix}*`], fenceSuffix: ':fence', keyspaceNotifications: 'off' }, 1_000);
    try {
      const pipeline = redis.pipeline();
      for (let i = 0; i < 1_200; i++) pipeline.set(`${prefix}${i}`, `worker-${i}`, 'PX', 60_000);
      await pipeline.exec();
      let told = 0;
      const { observations } = await source.snapshot(AbortSignal.timeout(10_000), () => told++);
      expect(observations).toHaveLength(1_200);
      // Three batches of 500 keys read, and at least one page of SCAN.
      expect(told).toBeGreaterThanOrEqual(4);
    } finally {
      await source.close();
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    }
  });

  it('etcd: each page of keys, each batch of values and each lease TTL read', async () => {
    const client = new Etcd3({ hosts: services.etcdEndpoints[0]! });
    const prefix = `progress-${label}/`;
    const source = createSource({ name: 'progress', backend: 'etcd', endpoints: [services.etcdEndpoints[0]!], prefixes: [prefix] }, 1_000);
    const lease = client.lease(60, { autoKeepAlive: false });
    try {
      for (let i = 0; i < 100; i++) await lease.put(`${prefix}${i}`).value(`worker-${i}`);
      let told = 0;
      const { observations } = await source.snapshot(AbortSignal.timeout(10_000), () => told++);
      expect(observations).toHaveLength(100);
      // One page of keys, two batches of values (64 a transaction), one lease's TTL.
      expect(told).toBeGreaterThanOrEqual(4);
    } finally {
      await source.close();
      await lease.revoke().catch(() => {});
      client.close();
    }
  });
});
