// Benchmark (issue 29): a ZooKeeper source of 10,000 Curator lock nodes, observed by the
// collector with a PostgreSQL store, beside its peer measured in the same run: a Redis source
// of as many keys, pushed by keyspace notifications. For each it reports how long a change of
// holder takes to be visible through the API (published on the bus that /api/v1/stream serves,
// after the store write commits), p50 and p99; the ZooKeeper source's full reads; the first
// read of everything; the collector's CPU and event-loop delay.
//
// The lock nodes are InterProcessMutex nodes as Curator makes them (ephemeral sequential
// "_c_<uuid>-lock-<n>", the holder's name as data), one lock znode each under one path, held by
// one session of this process. A change of holder deletes the holder's node and makes another
// (what a Curator release and the next acquisition do); a Redis change is a SET of the key.
//
//   node --import tsx bench/zookeeper-bench.ts [--locks 10000] [--seconds 30] [--write]
//
// Needs the test services (`bash scripts/services.sh up`).
import { randomBytes, randomUUID } from 'node:crypto';
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import Redis from 'ioredis';
import zookeeper from 'node-zookeeper-client';
import type { Config } from '../lib/config';
import { startCollector } from '../lib/collector';
import { createBus } from '../lib/live/bus';
import type { ReadReport } from '../lib/collector/observe-source';
import { openStore } from '../lib/db/store';
import { createPostgresDatabase } from '../tests/support/databases';
import { ROOT, testServices } from '../tests/support/services';
import { zkClient } from '../tests/support/zookeeper-layouts';
import { seedRedisLeases } from './seed-leases';
import { gitHead, log, percentile, sleep, writeResultsSection } from './support';

const { values } = parseArgs({ options: { locks: { type: 'string', default: '10000' }, seconds: { type: 'string', default: '30' }, write: { type: 'boolean', default: false } } });
const LOCKS = Number(values.locks);
const SECONDS = Number(values.seconds);
const POLL_MS = 1_000;
const CHANGE_EVERY_MS = 100;
const services = testServices();
const run = randomBytes(3).toString('hex');
const root = `/zkbench${run}`;
const redisPrefix = `zkbench${run}:`;

const zk = await zkClient(services.zookeeper);
const call = <T>(start: (cb: (error: unknown, value: T) => void) => void) => new Promise<T>((resolve, reject) => start((e, v) => (e ? reject(e as Error) : resolve(v))));
/** Makes the holder node of lock i, as Curator's InterProcessMutex does; its path. */
const acquire = (i: number, holder: string) =>
  call<string>((cb) => zk.client.create(`${root}/lock-${i}/_c_${randomUUID()}-lock-`, Buffer.from(holder), zookeeper.CreateMode.EPHEMERAL_SEQUENTIAL, (e, p) => cb(e, p)));
const release = (nodePath: string) => call<void>((cb) => zk.client.remove(nodePath, -1, (e) => cb(e, undefined)));

// ------------------------------------------------------------------ the locks
const setupStarted = performance.now();
await zk.mkdirp(root);
const held: string[] = new Array<string>(LOCKS);
for (let i = 0; i < LOCKS; i += 500) {
  const batch = Array.from({ length: Math.min(500, LOCKS - i) }, (_, j) => i + j);
  await Promise.all(batch.map((n) => call<string>((cb) => zk.client.create(`${root}/lock-${n}`, (e, p) => cb(e, p)))));
  const nodes = await Promise.all(batch.map((n) => acquire(n, `worker-${n % 89}`)));
  nodes.forEach((node, j) => (held[batch[j]!] = node));
}
const redis = new Redis(services.redisUrl);
await seedRedisLeases(redis, redisPrefix, LOCKS, 600_000);
log(`${LOCKS} ZooKeeper lock nodes and ${LOCKS} Redis keys made in ${((performance.now() - setupStarted) / 1000).toFixed(1)} s`);

// ------------------------------------------------------------------ the collector
const storeDb = await createPostgresDatabase('lh_zkbench');
const store = await openStore({ kind: 'postgres', url: storeDb.url });
const config = {
  sources: [
    { name: 'zk', backend: 'zookeeper', connect: services.zookeeper, paths: [root] },
    { name: 'redis', backend: 'redis', urls: [services.redisUrl], match: [`${redisPrefix}*`], fenceSuffix: ':fence', keyspaceNotifications: 'auto' },
  ],
  pollMs: POLL_MS,
  retention: { rollupDays: 30, eventDays: 90, renewalSamplesPerLease: 120 },
  file: null,
  store: { kind: 'postgres', url: storeDb.url },
  host: '127.0.0.1',
  port: 0,
  collectorLeaseTtlMs: 10_000,
} as Config;
const reads: (ReadReport & { at: number })[] = [];
const bus = createBus();
const collectStarted = performance.now();
const collector = startCollector({ bus, store, config, log: () => {}, onRead: (r) => reads.push({ ...r, at: performance.now() }) });
while ((await store.prisma.lease.count()) < 2 * LOCKS) {
  if (performance.now() - collectStarted > 300_000) throw new Error('the collector did not store every lease within 5 minutes');
  await sleep(200);
}
const firstReadS = (performance.now() - collectStarted) / 1000;
await sleep(3 * POLL_MS);

// ------------------------------------------------------------------ the measurement
const pending = new Map<string, { backend: 'zk' | 'redis'; holder: string; at: number }>();
const latencies: Record<'zk' | 'redis', number[]> = { zk: [], redis: [] };
const { unsubscribe } = bus.subscribe((message) => {
  if (message.type !== 'lease') return;
  const waiting = pending.get(message.lease.id);
  // A ZooKeeper holder is "<data> (session 0x...)".
  if (waiting && message.lease.holder !== null && (message.lease.holder === waiting.holder || message.lease.holder.startsWith(`${waiting.holder} (`))) {
    latencies[waiting.backend].push(performance.now() - waiting.at);
    pending.delete(message.lease.id);
  }
});
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
reads.length = 0;
const cpuStart = process.cpuUsage();
const windowStart = performance.now();
for (let change = 1; performance.now() - windowStart < SECONDS * 1000; change++) {
  const i = (change * 7919) % LOCKS;
  const holder = `moved-${change}`;
  const started = performance.now();
  // The new holder's node is made first, then the old one goes: the lease goes straight from one holder to the next.
  const next = await acquire(i, holder);
  pending.set(`zk/${root}/lock-${i}`, { backend: 'zk', holder, at: performance.now() });
  await release(held[i]!);
  held[i] = next;
  pending.set(`redis/${redisPrefix}${i}`, { backend: 'redis', holder, at: performance.now() });
  await redis.set(`${redisPrefix}${i}`, holder, 'KEEPTTL');
  await sleep(Math.max(0, CHANGE_EVERY_MS - (performance.now() - started)));
}
await sleep(POLL_MS + 500);
const cpu = process.cpuUsage(cpuStart);
const wallMs = performance.now() - windowStart;
loopDelay.disable();
unsubscribe();
const lost = pending.size;

const fullReads = reads.filter((r) => r.source === 'zk' && r.kind === 'full' && r.ok).map((r) => r.durationMs);
const f = (x: number) => (Number.isNaN(x) ? '—' : x < 10 ? x.toFixed(1) : Math.round(x).toLocaleString('en'));
const stat = (xs: number[]) => `${f(percentile(xs, 50))} / ${f(percentile(xs, 99))} ms (${xs.length})`;
const ratio = percentile(latencies.zk, 99) / percentile(latencies.redis, 99);
const report = [
  `Measured ${new Date().toISOString().slice(0, 10)} at ${gitHead(ROOT)} on ${os.cpus()[0]?.model.trim()} (${os.cpus().length} cores), Node ${process.version}; ` +
    `ZooKeeper ${services.zookeeper}, Redis and the PostgreSQL store on loopback; poll every ${POLL_MS} ms; ${SECONDS} s measured, one change of holder a backend every ${CHANGE_EVERY_MS} ms. CPU is the collector's and this process's (which also makes the changes).`,
  '',
  '| source | leases | change visible through the API, p50 / p99 (n) | full read p50 / p99 (n) |',
  '|---|---:|---|---|',
  `| ZooKeeper (Curator lock nodes, by watches) | ${LOCKS.toLocaleString('en')} | ${stat(latencies.zk)} | ${stat(fullReads)} |`,
  `| Redis (keyspace notifications), the peer | ${LOCKS.toLocaleString('en')} | ${stat(latencies.redis)} | — |`,
  '',
  `ZooKeeper p99 against Redis p99: ${ratio.toFixed(2)}×. First read of both sources to every lease in the store: ${firstReadS.toFixed(1)} s. ` +
    `CPU ${((cpu.user + cpu.system) / 1000 / wallMs).toFixed(2)} cores; event loop delay p99 / max ${f(loopDelay.percentile(99) / 1e6)} / ${f(loopDelay.max / 1e6)} ms; changes not seen by the end: ${lost}.`,
].join('\n');
console.log(report);

await collector.stop();
await store.close();
await storeDb.drop();
const keys = await redis.keys(`${redisPrefix}*`);
for (let i = 0; i < keys.length; i += 1_000) await redis.del(...keys.slice(i, i + 1_000));
redis.disconnect();
for (let i = 0; i < LOCKS; i += 500) {
  const batch = Array.from({ length: Math.min(500, LOCKS - i) }, (_, j) => i + j);
  await Promise.all(batch.map((n) => release(held[n]!).catch(() => {})));
  await Promise.all(batch.map((n) => release(`${root}/lock-${n}`).catch(() => {})));
}
await release(root).catch(() => {});
zk.close();
if (values.write) writeResultsSection({ id: 'zookeeper-bench', title: 'ZooKeeper: 10,000 Curator lock nodes (issue 29)', command: 'node --import tsx bench/zookeeper-bench.ts --write', report });
process.exit(0);
