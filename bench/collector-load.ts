// The renewing side of bench/collector-bench.ts, in its own process so its CPU is not
// counted as the collector's: every lease is renewed every RENEW_MS, spread evenly
// (PostgreSQL: UPDATE expires_at; Redis: PEXPIRE; etcd: a keepalive on one stream).
import { Etcd3 } from 'etcd3';
import Redis from 'ioredis';
import pg from 'pg';

type Setup = { sourceDbUrl: string; redisUrl: string; redisPrefix: string; etcdEndpoints: string[]; counts: { pg: number; redis: number }; ttlMs: number; renewMs: number };

const TICK_MS = 100;
let setup: Setup | null = null;
const etcdLeases: string[] = [];

process.on('message', (message: { type: 'setup'; setup: Setup } | { type: 'etcd'; ids: string[] }) => {
  if (message.type === 'setup') setup = message.setup;
  else etcdLeases.push(...message.ids);
});
process.on('SIGTERM', () => process.exit(0));
process.on('disconnect', () => process.exit(0));

while (!setup) await new Promise((resolve) => setTimeout(resolve, 20));
const config: Setup = setup;
const sql = new pg.Client(config.sourceDbUrl);
await sql.connect();
const redis = new Redis(config.redisUrl);
const etcd = new Etcd3({ hosts: config.etcdEndpoints });
const keepalive = await etcd.leaseClient.leaseKeepAlive();
keepalive.on('data', () => {});
keepalive.on('error', () => {});
process.send?.({ type: 'ready' });

const ticksPerRound = config.renewMs / TICK_MS;
for (let tick = 0; ; tick++) {
  const started = Date.now();
  const slice = (count: number) => {
    const from = Math.floor(((tick % ticksPerRound) * count) / ticksPerRound);
    const to = Math.floor((((tick % ticksPerRound) + 1) * count) / ticksPerRound);
    return [from, to] as const;
  };
  const [pgFrom, pgTo] = slice(config.counts.pg);
  if (pgTo > pgFrom) {
    const names = Array.from({ length: pgTo - pgFrom }, (_, i) => `job-${pgFrom + i + 1}`);
    await sql.query(`UPDATE leases SET expires_at = now() + $2 * interval '1 millisecond' WHERE name = ANY($1)`, [names, config.ttlMs]);
  }
  const [rFrom, rTo] = slice(config.counts.redis);
  if (rTo > rFrom) {
    const pipeline = redis.pipeline();
    for (let i = rFrom; i < rTo; i++) pipeline.pexpire(`${config.redisPrefix}${i}`, config.ttlMs);
    await pipeline.exec();
  }
  const [eFrom, eTo] = slice(etcdLeases.length);
  for (let i = eFrom; i < eTo; i++) keepalive.write({ ID: etcdLeases[i]! });
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, TICK_MS - (Date.now() - started))));
}
