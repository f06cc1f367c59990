// Redlock mode over three independent Redis instances, with instances failing: a majority
// keeps granting, fewer than a majority is "unavailable" (never "free"), and the fencing
// token keeps rising even past fences left high by an attempt that failed.
import Redis from 'ioredis';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BackendUnavailableError, createLeaseClient, type LeaseClient } from '../../lib/lease';
import { startRedisServer, type RedisServer } from '../support/redis-servers';

const PORTS = [16394, 16395, 16396];
let servers: RedisServer[] = [];
let client: LeaseClient;
const key = () => `redlock:${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  servers = await Promise.all(PORTS.map((port) => startRedisServer(port)));
  client = createLeaseClient({ backend: 'redis', urls: servers.map((s) => s.url), callTimeoutMs: 1_500 });
});
afterAll(async () => {
  await client.close();
  await Promise.all(servers.map((s) => s.stop()));
});

describe('redlock', () => {
  it('writes the lock and the same token on every instance', async () => {
    const k = key();
    const lease = (await client.acquire(k, { holder: 'w', ttlMs: 5_000 }))!;
    for (const server of servers) {
      const redis = new Redis(server.url);
      expect(await redis.get(k)).toBe(lease.holder);
      expect(await redis.get(`${k}:fence`)).toBe(lease.token.toString());
      redis.disconnect();
    }
    expect(await client.release(lease)).toBe(true);
  });

  it('a fence left high on one instance by a failed attempt still yields a token above it, everywhere', async () => {
    const k = key();
    const stray = new Redis(servers[2]!.url);
    await stray.set(`${k}:fence`, '41');
    stray.disconnect();
    const first = (await client.acquire(k, { holder: 'w', ttlMs: 5_000 }))!;
    expect(first.token >= 41n).toBe(true);
    await expect(client.renew(first)).resolves.toBeTruthy();
    expect(await client.release(first)).toBe(true);
    const second = (await client.acquire(k, { holder: 'w', ttlMs: 5_000 }))!;
    expect(second.token > first.token).toBe(true);
    await client.release(second);
  });

  it('keeps working with one instance of three down, and tokens keep rising', async () => {
    const k = key();
    const before = (await client.acquire(k, { holder: 'w', ttlMs: 5_000 }))!;
    await client.release(before);
    await servers[0]!.stop();
    try {
      const lease = (await client.acquire(k, { holder: 'w', ttlMs: 5_000 }))!;
      expect(lease).not.toBeNull();
      expect(lease.token > before.token).toBe(true);
      await expect(client.renew(lease)).resolves.toBeTruthy();
      expect(await client.inspect(k)).toMatchObject({ holder: lease.holder, token: lease.token });
      expect(await client.release(lease)).toBe(true);

      // With a second instance down there is no majority: unavailable, never "free" or "not yours".
      await servers[1]!.stop();
      await expect(client.acquire(k, { holder: 'w', ttlMs: 5_000 })).rejects.toBeInstanceOf(BackendUnavailableError);
      await expect(client.inspect(k)).rejects.toBeInstanceOf(BackendUnavailableError);
    } finally {
      servers[0] = await startRedisServer(PORTS[0]!);
      servers[1] = await startRedisServer(PORTS[1]!);
    }
  }, 30_000);
});
