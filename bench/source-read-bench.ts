// Benchmark: one full read (`snapshot()`) of a source of N keys, Redis and etcd, against a peer
// read measured in the same run: for Redis, SCAN with pipelined GET and PTTL a thousand keys
// at a time (ioredis, nothing else); for etcd, range reads of the prefix, 10,000 keys each
// (keys and values, no lease TTLs). Leasehold's read also reads each key's fence counter and value digest (Redis)
// and the lease TTLs that are due (etcd: all of them on the first read, few after), and
// judges every key. The event loop's delay is measured during Leasehold's reads.
//
//   node --import tsx bench/source-read-bench.ts [--keys 100000] [--reads 5] [--write]
//
// Needs the test services (`bash scripts/services.sh up`). With --write, replaces the
// source-read section of bench/RESULTS.md.
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Etcd3 } from 'etcd3';
import Redis from 'ioredis';
import { createSource } from '../lib/sources/registry';
import { testServices } from '../tests/support/services';
import { grantEtcdLeases, removeSeededLeases, seedRedisLeases } from './seed-leases';
import { log, percentile, writeResultsSection } from './support';

const { values } = parseArgs({ options: { keys: { type: 'string', default: '100000' }, reads: { type: 'string', default: '5' }, write: { type: 'boolean', default: false } } });
const keys = Number(values.keys);
const reads = Number(values.reads);
const services = testServices();
const TTL_MS = 600_000;
const run = randomBytes(3).toString('hex');
const redisPrefix = `srb${run}:`;
const etcdPrefix = `srb${run}/`;

const ms = (x: number) => (x >= 100 ? Math.round(x).toLocaleString('en-US') : x.toFixed(1));

/** Times `read` `reads` times after one untimed first read; the event loop's delay p99 and max over the timed reads. */
async function measure(read: () => Promise<number>, watchLoop: boolean) {
  const first = performance.now();
  await read();
  const firstMs = performance.now() - first;
  const durations: number[] = [];
  const loop = monitorEventLoopDelay({ resolution: 5 });
  if (watchLoop) loop.enable();
  let seen = 0;
  for (let i = 0; i < reads; i++) {
    const started = performance.now();
    seen = await read();
    durations.push(performance.now() - started);
  }
  loop.disable();
  return { firstMs, p50: percentile(durations, 50), max: Math.max(...durations), seen, loopP99: loop.percentile(99) / 1e6, loopMax: loop.max / 1e6 };
}

async function peerRedis(redis: Redis): Promise<number> {
  let cursor = '0';
  let seen = 0;
  do {
    const [next, found] = await redis.scanBuffer(cursor, 'MATCH', `${redisPrefix}*`, 'COUNT', 1_000);
    cursor = next.toString();
    const pipeline = redis.pipeline();
    for (const key of found) pipeline.getBuffer(key).pttl(key);
    const answers = (await pipeline.exec()) ?? [];
    seen += answers.length / 2;
  } while (cursor !== '0');
  return seen;
}

/** The prefix's keys and values, 10,000 a range read (one answer must stay under gRPC's 4 MB). */
async function peerEtcd(etcd: Etcd3): Promise<number> {
  const end = Buffer.from(etcdPrefix.slice(0, -1) + String.fromCharCode(etcdPrefix.charCodeAt(etcdPrefix.length - 1) + 1));
  let from = Buffer.from(etcdPrefix);
  let seen = 0;
  for (;;) {
    const { kvs, more } = await etcd.kv.range({ key: from, range_end: end, limit: 10_000 });
    seen += kvs.length;
    if (!more || kvs.length === 0) return seen;
    from = Buffer.concat([kvs.at(-1)!.key, Buffer.from([0])]);
  }
}

async function main() {
  const redis = new Redis(services.redisUrl);
  const etcd = new Etcd3({ hosts: services.etcdEndpoints });
  try {
    log(`seeding ${keys} Redis keys and ${keys} etcd keys with a lease each`);
    await seedRedisLeases(redis, redisPrefix, keys, TTL_MS);
    await grantEtcdLeases(etcd, etcdPrefix, keys, TTL_MS, () => {});
    const redisSource = createSource({ name: 'r', backend: 'redis', urls: [services.redisUrl], match: [`${redisPrefix}*`], fenceSuffix: ':fence', keyspaceNotifications: 'off' }, 1_000);
    const etcdSource = createSource({ name: 'e', backend: 'etcd', endpoints: services.etcdEndpoints, prefixes: [etcdPrefix] }, 1_000);
    const ours = (source: typeof redisSource) => async () => (await source.snapshot(AbortSignal.timeout(120_000))).observations.length;
    const rows: string[] = [];
    for (const [name, oursRead, peerRead] of [
      ['Redis', ours(redisSource), () => peerRedis(redis)],
      ['etcd', ours(etcdSource), () => peerEtcd(etcd)],
    ] as const) {
      log(`${name}: Leasehold's snapshot()`);
      const a = await measure(oursRead, true);
      log(`${name}: the peer`);
      const b = await measure(peerRead, false);
      if (a.seen !== keys) throw new Error(`${name}: Leasehold saw ${a.seen} leases, not ${keys}`);
      rows.push(`| ${name} | ${keys.toLocaleString('en-US')} | ${ms(a.firstMs)} ms | ${ms(a.p50)} / ${ms(a.max)} ms | ${ms(a.loopP99)} / ${ms(a.loopMax)} ms | ${ms(b.p50)} ms | ${(a.p50 / b.p50).toFixed(2)} |`);
    }
    await Promise.all([redisSource.close(), etcdSource.close()]);
    const report = [
      `Measured ${new Date().toISOString().slice(0, 10)} on ${os.cpus()[0]?.model.trim() ?? 'unknown CPU'} (${os.cpus().length} cores), Node ${process.version}; Redis and etcd on loopback, idle apart from this; ${reads} timed reads after a first one.`,
      '',
      "| backend | keys | Leasehold's first read | Leasehold's read p50 / max | event loop delay p99 / max (during Leasehold's reads) | peer read p50 | ours / peer |",
      '|---|---:|---:|---:|---:|---:|---:|',
      ...rows,
    ].join('\n');
    console.log(report);
    if (values.write) writeResultsSection({ id: 'source-read-bench', title: 'One source of 100,000 keys: a full read (issue 28)', command: 'node --import tsx bench/source-read-bench.ts --keys 100000 --write', report });
  } finally {
    await removeSeededLeases(redis, redisPrefix, etcd, etcdPrefix).catch(() => {});
    redis.disconnect();
    etcd.close();
  }
}

await main();
