// Benchmark: the collector over N leases spread evenly over PostgreSQL (a lease table,
// polled), Redis (keyspace notifications: pushed) and etcd (watch: pushed), polled every
// second, with a PostgreSQL store. Every lease has a 30 s TTL and is renewed every 10 s by a
// separate process (bench/collector-load.ts), so 10,000 leases are 1,000 renewals a second,
// the volumes Leasehold is built for. For each N it reports:
//   - the time of one full read per source (read, diff, write), p50 and p99 (PostgreSQL: of a poll, which reads the rows changed since the last);
//   - the process's CPU, in cores, and per poll round;
//   - how long a change in a source takes to be visible through the API (published on the
//     bus that /api/v1/stream serves, after the store write commits), p50 and p99.
//
//   node --import tsx bench/collector-bench.ts [--sizes 1000,10000,100000] [--seconds 20] [--write]
//
// Needs the test services (`bash scripts/services.sh up`). With --write, replaces the
// collector section of bench/RESULTS.md.
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Etcd3 } from 'etcd3';
import Redis from 'ioredis';
import pg from 'pg';
import type { Config } from '../lib/config';
import { startCollector } from '../lib/collector';
import { metricsRegistry } from '../lib/metrics';
import { createBus } from '../lib/live/bus';
import type { ReadReport } from '../lib/collector/observe-source';
import { openStore } from '../lib/db/store';
import { createPostgresDatabase } from '../tests/support/databases';
import { ROOT, testServices } from '../tests/support/services';
import { grantEtcdLeases, removeSeededLeases, seedPgLeases, seedRedisLeases } from './seed-leases';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '1000,10000,100000' },
    seconds: { type: 'string', default: '20' },
    write: { type: 'boolean', default: false },
    verbose: { type: 'boolean', default: false },
  },
});
const sizes = values.sizes.split(',').map(Number);
const measureSeconds = Number(values.seconds);
const services = testServices();
const POLL_MS = 1_000;
const TTL_MS = 30_000;
const RENEW_MS = 10_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (xs: number[], p: number) => {
  if (xs.length === 0) return NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
};
const log = (line: string) => process.stderr.write(`${line}\n`);

type Result = {
  size: number;
  setupS: number;
  firstReadS: number;
  cores: number;
  cpuPerRoundMs: number;
  polls: Record<string, { n: number; p50: number; p99: number }>;
  latency: Record<string, { n: number; p50: number; p99: number }>;
  /** How late the event loop ran timers (ms): long synchronous work shows here. */
  eventLoopP99: number;
  eventLoopMax: number;
  /** Rows waiting behind the store write in progress (leasehold_write_queue_rows, all sources), sampled every 100 ms: max, and at the end of the window. */
  queue: Record<'changes' | 'renewals', { max: number; end: number }>;
};

async function runSize(size: number): Promise<Result> {
  const run = randomBytes(3).toString('hex');
  const perBackend = Math.floor(size / 3);
  const counts = { pg: perBackend, redis: size - 2 * perBackend, etcd: perBackend };
  const setupStarted = performance.now();

  // ---------------------------------------------------------------- the observed leases
  const storeDb = await createPostgresDatabase('lh_cbench');
  const sourceDb = await createPostgresDatabase('lh_cbsrc');
  const sql = new pg.Client(sourceDb.url);
  await sql.connect();
  await seedPgLeases(sql, counts.pg, TTL_MS);

  const redis = new Redis(services.redisUrl);
  const redisPrefix = `cbench${run}:`;
  await seedRedisLeases(redis, redisPrefix, counts.redis, TTL_MS);

  // The renewer starts before the etcd leases are granted, and keeps each alive as it comes.
  const renewer = fork(path.join(ROOT, 'bench', 'collector-load.ts'), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const renewerReady = new Promise<void>((resolve) => renewer.on('message', (m: { type: string }) => m.type === 'ready' && resolve()));
  const etcdPrefix = `cbench${run}/`;
  renewer.send({ type: 'setup', setup: { sourceDbUrl: sourceDb.url, redisUrl: services.redisUrl, redisPrefix, etcdEndpoints: services.etcdEndpoints, counts, ttlMs: TTL_MS, renewMs: RENEW_MS } });
  await renewerReady;

  const etcd = new Etcd3({ hosts: services.etcdEndpoints });
  // The test etcd keeps the history of every run before this one (it runs without automatic
  // compaction, which the tests of watches behind a compaction need): compacted here, as a
  // production etcd compacts itself, so that no run reads through the runs before it.
  const { header } = await etcd.kv.range({ key: Buffer.from(etcdPrefix) });
  await etcd.kv.compact({ revision: header.revision, physical: true });
  const etcdLeases = await grantEtcdLeases(etcd, etcdPrefix, counts.etcd, TTL_MS, (ids) => renewer.send({ type: 'etcd', ids }));
  const setupS = (performance.now() - setupStarted) / 1000;
  log(`  ${size}: ${counts.pg} pg rows, ${counts.redis} redis keys, ${counts.etcd} etcd keys in ${setupS.toFixed(0)} s`);

  // ---------------------------------------------------------------- the collector
  const store = await openStore({ kind: 'postgres', url: storeDb.url });
  const config = {
    sources: [
      { name: 'pg', backend: 'postgres', url: sourceDb.url, tables: [{ table: 'leases', format: 'leasehold' }], advisoryLocks: false },
      { name: 'redis', backend: 'redis', urls: [services.redisUrl], match: [`${redisPrefix}*`], fenceSuffix: ':fence', keyspaceNotifications: 'auto' },
      { name: 'etcd', backend: 'etcd', endpoints: services.etcdEndpoints, prefixes: [etcdPrefix] },
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
  const collectStarted = performance.now();
  const bus = createBus();
  const collector = startCollector({
    bus,
    store,
    config,
    log: values.verbose ? (line) => log(`    collector: ${line}`) : () => {},
    onRead: (r) => {
      reads.push({ ...r, at: performance.now() });
      if (values.verbose && r.kind === 'full') log(`    read ${r.source}: ${r.ok ? 'ok' : 'FAILED'} ${r.leases} leases, ${r.changed} changed, ${r.events} events, ${Math.round(r.durationMs)} ms`);
    },
  });
  while ((await store.prisma.lease.count()) < size) {
    if (performance.now() - collectStarted > 600_000) throw new Error(`the collector did not write ${size} leases within 10 minutes`);
    await sleep(200);
  }
  const firstReadS = (performance.now() - collectStarted) / 1000;
  await sleep(3 * POLL_MS); // past the first reads' writes

  // ---------------------------------------------------------------- the measurement
  const pending = new Map<string, { backend: string; holder: string; at: number }>();
  const latencies: Record<string, number[]> = { redis: [], etcd: [], pg: [] };
  const { unsubscribe } = bus.subscribe((message) => {
    if (message.type !== 'lease') return;
    const waiting = pending.get(message.lease.id);
    if (waiting && message.lease.holder === waiting.holder) {
      latencies[waiting.backend]!.push(performance.now() - waiting.at);
      pending.delete(message.lease.id);
    }
  });
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  const queue: Result['queue'] = { changes: { max: 0, end: 0 }, renewals: { max: 0, end: 0 } };
  const sampleQueue = async () => {
    const gauge = metricsRegistry().getSingleMetric('leasehold_write_queue_rows');
    const now = { changes: 0, renewals: 0 };
    for (const v of (await gauge?.get())?.values ?? []) now[v.labels.queue as 'changes' | 'renewals'] += v.value;
    for (const q of ['changes', 'renewals'] as const) queue[q] = { max: Math.max(queue[q].max, now[q]), end: now[q] };
  };
  const sampler = setInterval(() => void sampleQueue(), 100);
  const windowStart = performance.now();
  const cpuStart = process.cpuUsage();
  reads.length = 0;
  let change = 0;
  while (performance.now() - windowStart < measureSeconds * 1000) {
    change++;
    const holder = `moved-${change}`;
    const i = (change * 7919) % Math.max(1, Math.min(counts.pg, counts.redis, counts.etcd));
    pending.set(`pg/leases/job-${i + 1}`, { backend: 'pg', holder, at: performance.now() });
    await sql.query(`UPDATE leases SET owner = $2, token = token + 1000000 WHERE name = $1`, [`job-${i + 1}`, holder]);
    pending.set(`redis/${redisPrefix}${i}`, { backend: 'redis', holder, at: performance.now() });
    await redis.set(`${redisPrefix}${i}`, holder, 'KEEPTTL');
    pending.set(`etcd/${etcdPrefix}${i}`, { backend: 'etcd', holder, at: performance.now() });
    await etcd.kv.put({ key: Buffer.from(`${etcdPrefix}${i}`), value: Buffer.from(holder), lease: etcdLeases[i]! });
    await sleep(250);
  }
  await sleep(POLL_MS + 500); // let the last changes land
  clearInterval(sampler);
  await sampleQueue();
  const cpu = process.cpuUsage(cpuStart);
  const wallMs = performance.now() - windowStart;
  loopDelay.disable();
  const eventLoopP99 = loopDelay.percentile(99) / 1e6;
  const eventLoopMax = loopDelay.max / 1e6;
  unsubscribe();

  const polls: Result['polls'] = {};
  for (const source of ['pg', 'redis', 'etcd']) {
    // PostgreSQL: every poll (each reads the rows changed since the last, or everything); Redis and etcd: their full reads (their polls are liveness checks).
    const full = reads.filter((r) => r.source === source && (r.kind === 'full' || (source === 'pg' && r.kind === 'poll')) && r.ok).map((r) => r.durationMs);
    polls[source] = { n: full.length, p50: percentile(full, 50), p99: percentile(full, 99) };
  }
  const rounds = Math.max(1, ...Object.values(polls).map((p) => p.n));
  const cpuMs = (cpu.user + cpu.system) / 1000;
  const latency: Result['latency'] = {};
  for (const [backend, xs] of Object.entries(latencies)) latency[backend] = { n: xs.length, p50: percentile(xs, 50), p99: percentile(xs, 99) };
  const lost = pending.size;
  if (lost > 0) log(`  ${size}: ${lost} changes were not seen before the end of the window`);

  // ---------------------------------------------------------------- clean up
  renewer.kill('SIGTERM');
  await collector.stop();
  await store.close();
  await sql.end();
  await removeSeededLeases(redis, redisPrefix, etcd, etcdPrefix);
  redis.disconnect();
  etcd.close();
  await storeDb.drop();
  await sourceDb.drop();
  return { size, setupS, firstReadS, cores: cpuMs / wallMs, cpuPerRoundMs: cpuMs / rounds, polls, latency, eventLoopP99, eventLoopMax, queue };
}

function table(results: Result[]): string {
  const f = (x: number) => (Number.isNaN(x) ? '—' : x < 10 ? x.toFixed(1) : Math.round(x).toLocaleString('en'));
  const lines = [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${os.cpus()[0]?.model.trim()} (${os.cpus().length} cores), Node ${process.version}; ` +
      `servers on loopback; store PostgreSQL; poll every ${POLL_MS} ms; every lease has a ${TTL_MS / 1000} s TTL and is renewed every ${RENEW_MS / 1000} s ` +
      `by another process; ${measureSeconds} s measured per size, one change of holder per backend every 250 ms. CPU is the collector process's.`,
    '',
    '| leases | CPU (cores) | CPU per poll round | event loop delay p99 / max | pg poll (reads what changed) p50 / p99 | full read, redis p50 / p99 | etcd p50 / p99 | change visible: redis (push) p50 / p99 | etcd (push) p50 / p99 | pg (polled) p50 / p99 |',
    '|---:|---:|---:|---|---|---|---|---|---|---|',
  ];
  for (const r of results) {
    const poll = (s: string) => `${f(r.polls[s]!.p50)} / ${f(r.polls[s]!.p99)} ms`;
    const lat = (s: string) => `${f(r.latency[s]!.p50)} / ${f(r.latency[s]!.p99)} ms (${r.latency[s]!.n})`;
    lines.push(
      `| ${r.size.toLocaleString('en')} | ${r.cores.toFixed(2)} | ${f(r.cpuPerRoundMs)} ms | ${f(r.eventLoopP99)} / ${f(r.eventLoopMax)} ms | ${poll('pg')} | ${poll('redis')} | ${poll('etcd')} | ${lat('redis')} | ${lat('etcd')} | ${lat('pg')} |`,
    );
  }
  lines.push('', `First full read of every source, from start to every lease in the store: ${results.map((r) => `${r.size.toLocaleString('en')}: ${r.firstReadS.toFixed(1)} s`).join('; ')}.`);
  lines.push('', `Rows waiting behind the store write in progress (\`leasehold_write_queue_rows\`, every source, sampled every 100 ms), max and at the end of the window, state changes / renewals: ${results.map((r) => `${r.size.toLocaleString('en')}: ${r.queue.changes.max.toLocaleString('en')} and ${r.queue.changes.end} / ${r.queue.renewals.max.toLocaleString('en')} and ${r.queue.renewals.end}`).join('; ')}.`);
  return lines.join('\n');
}

const results: Result[] = [];
for (const size of sizes) {
  log(`size ${size}`);
  results.push(await runSize(size));
  log(table(results).split('\n').at(-3)!); // this size's row, as soon as it is known
}
const output = table(results);
console.log(output);
if (values.write) {
  const file = path.join(ROOT, 'bench', 'RESULTS.md');
  const text = readFileSync(file, 'utf8');
  writeFileSync(file, text.replace(/<!-- collector-bench:start -->[\s\S]*<!-- collector-bench:end -->/, `<!-- collector-bench:start -->\n${output}\n<!-- collector-bench:end -->`));
  log('wrote bench/RESULTS.md');
}
process.exit(0);
