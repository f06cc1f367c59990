// The observed leases the collector benches start from: a PostgreSQL lease table, Redis keys
// in Leasehold's layout (with their fence counters) and etcd single keys with a lease each.
import type { Etcd3 } from 'etcd3';
import type Redis from 'ioredis';
import type pg from 'pg';

/** A `leases` table of `count` rows ('job-1'…), each held for `ttlMs`. */
export async function seedPgLeases(sql: pg.Client, count: number, ttlMs: number): Promise<void> {
  await sql.query(`CREATE TABLE leases (name VARCHAR(200) PRIMARY KEY, owner VARCHAR(200), expires_at TIMESTAMPTZ NOT NULL, token BIGINT NOT NULL DEFAULT 0)`);
  await sql.query(`INSERT INTO leases SELECT 'job-' || i, 'worker-' || (i % 97), now() + $2 * interval '1 millisecond', i FROM generate_series(1, $1) AS i`, [count, ttlMs]);
}

/** `count` keys `${prefix}0`… held for `ttlMs`, each with its fence counter, a thousand a pipeline. */
export async function seedRedisLeases(redis: Redis, prefix: string, count: number, ttlMs: number): Promise<void> {
  for (let i = 0; i < count; i += 1_000) {
    const pipeline = redis.pipeline();
    for (let j = i; j < Math.min(count, i + 1_000); j++) {
      pipeline.set(`${prefix}${j}`, `worker-${j % 89}`, 'PX', ttlMs);
      pipeline.set(`${prefix}${j}:fence`, String(j + 1));
    }
    await pipeline.exec();
  }
}

/**
 * `count` keys `${prefix}0`… each on an etcd lease of its own, 64 at a time; each batch of lease
 * ids is handed to `onBatch` as soon as it is granted (so a renewer keeps them alive); returns
 * every id, by key index.
 */
export async function grantEtcdLeases(etcd: Etcd3, prefix: string, count: number, ttlMs: number, onBatch: (ids: string[]) => void): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 64) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(64, count - i) }, async (_, k) => {
        const j = i + k;
        const { ID } = await etcd.leaseClient.leaseGrant({ TTL: ttlMs / 1000 });
        await etcd.kv.put({ key: Buffer.from(`${prefix}${j}`), value: Buffer.from(`worker-${j % 83}`), lease: ID });
        ids[j] = ID;
        return ID;
      }),
    );
    onBatch(batch);
  }
  return ids;
}

/** Takes away what the seeding made: the Redis keys under `redisPrefix`, and the etcd keys under `etcdPrefix` with their leases. */
export async function removeSeededLeases(redis: Redis, redisPrefix: string, etcd: Etcd3, etcdPrefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${redisPrefix}*`, 'COUNT', 5_000);
    cursor = next;
    if (keys.length) await redis.del(...keys);
  } while (cursor !== '0');
  const { kvs } = await etcd.kv.range({ key: Buffer.from(etcdPrefix), range_end: Buffer.from(etcdPrefix.slice(0, -1) + String.fromCharCode(etcdPrefix.charCodeAt(etcdPrefix.length - 1) + 1)) });
  const leases = [...new Set(kvs.map((kv) => String(kv.lease)).filter((id) => id !== '0'))];
  for (let i = 0; i < leases.length; i += 256) await Promise.all(leases.slice(i, i + 256).map((ID) => etcd.leaseClient.leaseRevoke({ ID }).catch(() => {})));
  await etcd.delete().prefix(etcdPrefix);
}
