// Benchmark (issue 13): the collector's event loop while it watches a Redis holding ten lock
// values of 1 MB of random bytes each, against a peer in the same run: the same ten keys
// holding 32 random bytes each.
//
// Each case: ten value keys (1 MB or 32 bytes, random, each with a fence counter) and five
// ordinary locks (a short text holder), every one with a 30 s TTL and renewed (PEXPIRE) every
// 10 s by this process, staggered (1.5 renewals a second). The collector (startCollector from
// lib/collector, a PostgreSQL store, poll every second) observes one Redis source whose match
// pattern covers the fifteen keys, with the test Redis's keyspace notifications (its
// notify-keyspace-events is checked and reported), so every renewal is pushed and read at once
// and everything is read again every 10 s. The collector runs in a child process of its own
// (cwd: the checkout whose lib/ it runs), which measures after a warm-up:
//   - event loop delay, perf_hooks.monitorEventLoopDelay with a 1 ms resolution: p50, p99, max
//     (each figure includes the 1 ms sampling interval: an idle loop reads about 1 ms). Its
//     percentiles are per sample, and a stalled loop takes no samples: a 25 s block is one
//     sample among 50,000 and leaves the p99 untouched. So the loop is also timed by a 1 ms
//     timer chain of our own, weighted by time (the p99 of the time spent, and the seconds
//     spent in intervals over 50 ms), and every interval over 20 ms is listed with the CPU the
//     process used meanwhile (our own work) or not (the process was not running);
//   - its CPU (process.cpuUsage) and the bytes it read from its sockets and files (/proc/self/io rchar);
//   - how many reads it made (full and targeted) and their durations.
// With --old-root, the same cases run on that checkout (a `git worktree` of older code with
// its own node_modules and build): the "before" figures.
//
//   node --import tsx bench/binary-values-bench.ts [--root DIR] [--old-root DIR] [--warmup 15] [--seconds 60] [--rounds 1] [--write]
//
// Needs the test services (`bash scripts/services.sh up`). With --write, replaces the
// binary-values section of bench/RESULTS.md.
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import Redis from 'ioredis';
import { createPostgresDatabase } from '../tests/support/databases';
import { ROOT, testServices } from '../tests/support/services';
import { gitHead, log, percentile, sleep, writeResultsSection } from './support';

const { values } = parseArgs({
  options: {
    root: { type: 'string', default: ROOT },
    'old-root': { type: 'string' },
    warmup: { type: 'string', default: '15' },
    seconds: { type: 'string', default: '60' },
    rounds: { type: 'string', default: '1' },
    write: { type: 'boolean', default: false },
    json: { type: 'string' },
    /** Render the report from a --json file of an earlier run instead of running (with the same --rounds, --warmup, --seconds, --root, --old-root). */
    report: { type: 'string' },
    // internal: run one case's collector (in the child process)
    child: { type: 'string' },
  },
});
const WARMUP_S = Number(values.warmup);
const WINDOW_S = Number(values.seconds);
const VALUE_KEYS = 10;
const LOCKS = 5;
const TTL_MS = 30_000;
const POLL_MS = 1_000;
const services = testServices();

type ChildResult = {
  loop: { p50: number; p99: number; max: number; mean: number; count: number };
  /**
   * The same loop timed by a 1 ms timer chain of our own, weighted by time: a sample-based
   * p99 hides a long stall (a 25 s block is one sample among 50,000). `weightedP99`: 99 % of
   * the window was spent in timer intervals shorter than this; `stalledS`: seconds spent in
   * intervals over 50 ms; `stalls`: each interval over 20 ms, with the CPU the process used
   * meanwhile (about its length: our own work; much less: the process was not running).
   */
  timed: { weightedP99: number; stalledS: number; stalls: { atS: number; ms: number; cpuMs: number }[] };
  cpuPct: number;
  rcharPerS: number;
  reads: { full: number; targeted: number; failed: number; fullP50: number; fullP99: number; targetedP50: number; targetedP99: number };
  firstReadS: number;
  leases: number;
};

const kb = (bytesPerS: number) => (bytesPerS >= 1e6 ? `${(bytesPerS / 1e6).toFixed(1)} MB/s` : `${(bytesPerS / 1e3).toFixed(1)} kB/s`);
const rchar = () => Number(/rchar: (\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))?.[1] ?? NaN);

// ------------------------------------------------------------------ the child: the collector under measurement
if (values.child) {
  const { prefix } = JSON.parse(values.child) as { prefix: string };
  const root = process.cwd();
  const { startCollector } = (await import(pathToFileURL(path.join(root, 'lib', 'collector', 'index.ts')).href)) as typeof import('../lib/collector');
  const { openStore } = (await import(pathToFileURL(path.join(root, 'lib', 'db', 'store.ts')).href)) as typeof import('../lib/db/store');
  const storeDb = await createPostgresDatabase('lh_bvbench');
  const store = await openStore({ kind: 'postgres', url: storeDb.url });
  const config = {
    sources: [{ name: 'redis', backend: 'redis', urls: [services.redisUrl], match: [`${prefix}*`], fenceSuffix: ':fence', keyspaceNotifications: 'auto' }],
    pollMs: POLL_MS,
    retention: { rollupDays: 30, eventDays: 90, renewalSamplesPerLease: 120 },
    file: null,
    store: { kind: 'postgres', url: storeDb.url },
    host: '127.0.0.1',
    port: 0,
    collectorLeaseTtlMs: 10_000,
    allowedHosts: null,
  } as unknown as import('../lib/config').Config;
  const reads: { full: boolean; ok: boolean; durationMs: number }[] = [];
  const started = performance.now();
  const collector = startCollector({ store, config, log: () => {}, onRead: (r) => reads.push({ full: r.kind === 'full', ok: r.ok, durationMs: r.durationMs }) });
  while ((await store.prisma.lease.count()) < VALUE_KEYS + LOCKS) {
    if (performance.now() - started > 120_000) throw new Error('the collector did not write every lease within 2 minutes');
    await sleep(100);
  }
  const firstReadS = (performance.now() - started) / 1000;
  await sleep(WARMUP_S * 1000);

  reads.length = 0;
  const loop = monitorEventLoopDelay({ resolution: 1 });
  const cpu0 = process.cpuUsage();
  const io0 = rchar();
  const t0 = performance.now();
  loop.enable();
  const intervals: number[] = [];
  const stalls: ChildResult['timed']['stalls'] = [];
  let last = performance.now();
  let lastCpu = process.cpuUsage();
  let ticking = true;
  const tick = () => {
    const now = performance.now();
    const ms = now - last;
    intervals.push(ms);
    if (ms > 20) {
      const cpu = process.cpuUsage(lastCpu);
      stalls.push({ atS: Math.round(last - t0) / 1000, ms: Math.round(ms), cpuMs: Math.round((cpu.user + cpu.system) / 1000) });
    }
    last = now;
    lastCpu = process.cpuUsage();
    if (ticking) setTimeout(tick, 1);
  };
  setTimeout(tick, 1);
  await sleep(WINDOW_S * 1000);
  ticking = false;
  loop.disable();
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const io1 = rchar();
  const leases = await store.prisma.lease.count();
  await collector.stop();
  await store.close();
  await storeDb.drop();
  const sortedIntervals = [...intervals].sort((a, b) => a - b);
  const totalMs = sortedIntervals.reduce((a, b) => a + b, 0);
  let weightedP99 = NaN;
  for (let i = 0, sum = 0; i < sortedIntervals.length; i++) {
    sum += sortedIntervals[i]!;
    if (sum >= 0.99 * totalMs) {
      weightedP99 = sortedIntervals[i]!;
      break;
    }
  }
  const stalledS = intervals.filter((ms) => ms > 50).reduce((a, b) => a + b, 0) / 1000;
  const full = reads.filter((r) => r.full && r.ok).map((r) => r.durationMs);
  const targeted = reads.filter((r) => !r.full && r.ok).map((r) => r.durationMs);
  const result: ChildResult = {
    loop: { p50: loop.percentile(50) / 1e6, p99: loop.percentile(99) / 1e6, max: loop.max / 1e6, mean: loop.mean / 1e6, count: loop.count },
    timed: { weightedP99, stalledS, stalls },
    cpuPct: ((cpu.user + cpu.system) / 1000 / wallMs) * 100,
    rcharPerS: ((io1 - io0) / wallMs) * 1000,
    reads: {
      full: full.length,
      targeted: targeted.length,
      failed: reads.filter((r) => !r.ok).length,
      fullP50: percentile(full, 50),
      fullP99: percentile(full, 99),
      targetedP50: percentile(targeted, 50),
      targetedP99: percentile(targeted, 99),
    },
    firstReadS,
    leases,
  };
  process.send!(result);
  process.exit(0);
}

// ------------------------------------------------------------------ the parent: keys, renewals, cases
const redis = new Redis(services.redisUrl);
const notify = values.report ? '' : (((await redis.config('GET', 'notify-keyspace-events')) as string[])[1] ?? '');
if (!values.report) log(`test Redis notify-keyspace-events: "${notify}"`);

type Case = { code: 'after' | 'before'; size: 'big' | 'small'; round: number; result: ChildResult; load: { mean: number; max: number } };

async function runCase(code: 'after' | 'before', size: 'big' | 'small', round: number): Promise<Case> {
  const root = code === 'after' ? values.root : values['old-root']!;
  const prefix = `bvbench${randomBytes(3).toString('hex')}:`;
  const bytes = size === 'big' ? 1024 * 1024 : 32;
  const keys: string[] = [];
  for (let i = 0; i < VALUE_KEYS; i++) {
    const key = `${prefix}value-${i}`;
    await redis.set(key, randomBytes(bytes), 'PX', TTL_MS);
    await redis.set(`${key}:fence`, String(i + 1));
    keys.push(key);
  }
  for (let i = 0; i < LOCKS; i++) {
    const key = `${prefix}lock-${i}`;
    await redis.set(key, `worker-${i}`, 'PX', TTL_MS);
    await redis.set(`${key}:fence`, String(i + 1));
    keys.push(key);
  }
  // Each key renewed every 10 s, the fifteen spread over the ten seconds.
  let tick = 0;
  const renewer = setInterval(() => {
    const slot = tick++ % 10;
    keys.forEach((key, i) => {
      if (i % 10 === slot) void redis.pexpire(key, TTL_MS).catch(() => {});
    });
  }, 1_000);
  const child = fork(fileURLToPath(import.meta.url), ['--child', JSON.stringify({ prefix }), '--warmup', String(WARMUP_S), '--seconds', String(WINDOW_S)], {
    cwd: root,
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const loadSamples: number[] = [];
  const sampler = setInterval(() => loadSamples.push(os.loadavg()[0]!), 5_000);
  try {
    const result = await new Promise<ChildResult>((resolve, reject) => {
      child.once('message', (m) => resolve(m as ChildResult));
      child.once('exit', (exitCode) => reject(new Error(`the collector process exited (${exitCode}) without a result`)));
    });
    // NaN (no reads of a kind) crosses the IPC channel as null.
    for (const [k, v] of Object.entries(result.reads)) if (v === null) (result.reads as Record<string, number>)[k] = NaN;
    if (result.timed.weightedP99 === null) result.timed.weightedP99 = NaN;
    const r = result;
    const load = { mean: loadSamples.reduce((a, b) => a + b, 0) / Math.max(1, loadSamples.length), max: Math.max(...loadSamples) };
    log(
      `${code} / ${size} (${round}): loop p50 ${r.loop.p50.toFixed(1)} p99 ${r.loop.p99.toFixed(1)} max ${r.loop.max.toFixed(1)} ms; time-weighted p99 ${r.timed.weightedP99.toFixed(1)} ms, ${r.timed.stalledS.toFixed(1)} s in stalls over 50 ms; stalls over 20 ms: ${r.timed.stalls.map((x) => `${x.ms} ms (CPU ${x.cpuMs} ms) at ${x.atS} s`).join(', ') || 'none'}; CPU ${r.cpuPct.toFixed(1)} %; ` +
        `read ${kb(r.rcharPerS)}; reads: ${r.reads.full} full (p50 ${r.reads.fullP50.toFixed(1)} / p99 ${r.reads.fullP99.toFixed(1)} ms), ` +
        `${r.reads.targeted} targeted (p50 ${r.reads.targetedP50.toFixed(1)} / p99 ${r.reads.targetedP99.toFixed(1)} ms), ${r.reads.failed} failed; ${r.leases} leases; ` +
        `load average during the case ${load.mean.toFixed(2)} (max ${load.max.toFixed(2)})`,
    );
    return { code, size, round, result, load };
  } finally {
    clearInterval(sampler);
    clearInterval(renewer);
    if (child.exitCode === null) child.kill('SIGTERM');
    const all = await redis.keys(`${prefix}*`);
    if (all.length) await redis.del(...all);
  }
}

type Saved = { startedAt: string; notify: string; loadBefore: number[]; loadAfter: number[]; cases: Case[] };
let saved: Saved;
if (values.report) {
  saved = JSON.parse(readFileSync(values.report, 'utf8')) as Saved;
} else {
  const loadBefore = os.loadavg();
  const startedAt = new Date().toISOString();
  const cases: Case[] = [];
  for (let round = 1; round <= Number(values.rounds); round++) {
    for (const code of values['old-root'] ? (['after', 'before'] as const) : (['after'] as const)) {
      for (const size of ['small', 'big'] as const) cases.push(await runCase(code, size, round));
    }
  }
  saved = { startedAt, notify, loadBefore, loadAfter: os.loadavg(), cases };
  if (values.json) writeFileSync(values.json, JSON.stringify(saved, null, 2));
}
redis.disconnect();
const { cases, loadBefore, loadAfter } = saved;

const f1 = (x: number) => (Number.isNaN(x) ? '—' : x.toFixed(1));
const worst = (xs: number[]) => Math.max(...xs);
const lines = [
  `Measured ${saved.startedAt.slice(0, 10)} on ${os.cpus()[0]?.model.trim()} (${os.cpus().length} cores), Node ${process.version}; ` +
    `load average ${loadBefore.map((l) => l.toFixed(2)).join(' / ')} at the start, ${loadAfter.map((l) => l.toFixed(2)).join(' / ')} at the end; ` +
    `redis-server on loopback with notify-keyspace-events "${saved.notify}"; store PostgreSQL; ${Number(values.rounds)} round(s); ` +
    `per case ${WARMUP_S} s warm-up after the first full read, then ${WINDOW_S} s measured. ` +
    `"after": ${gitHead(values.root)}${values['old-root'] ? `; "before": ${gitHead(values['old-root'])}` : ''}.`,
  '',
  '| code | values | event loop delay p50 / p99 / max | time-weighted p99; time in stalls over 50 ms | collector CPU | bytes read by the process | full reads (p50 / p99) | targeted reads (p50 / p99) | load avg (mean / max) |',
  '|---|---|---|---|---:|---:|---|---|---|',
];
for (const c of cases) {
  const r = c.result;
  lines.push(
    `| ${c.code} | ${VALUE_KEYS} × ${c.size === 'big' ? '1 MB' : '32 B'}${Number(values.rounds) > 1 ? ` (${c.round})` : ''} | ${f1(r.loop.p50)} / ${f1(r.loop.p99)} / ${f1(r.loop.max)} ms | ${f1(r.timed.weightedP99)} ms; ${r.timed.stalledS.toFixed(1)} s | ${f1(r.cpuPct)} % | ${kb(r.rcharPerS)} | ` +
      `${r.reads.full} (${f1(r.reads.fullP50)} / ${f1(r.reads.fullP99)} ms) | ${r.reads.targeted} (${f1(r.reads.targetedP50)} / ${f1(r.reads.targetedP99)} ms) | ${c.load.mean.toFixed(2)} / ${c.load.max.toFixed(2)} |`,
  );
}
lines.push('', '| code | event loop p99, 1 MB values / 32 B values (the higher of the rounds) | time-weighted p99, the same |', '|---|---:|---:|');
for (const code of values['old-root'] ? ['after', 'before'] : ['after']) {
  const of = (size: string, get: (r: ChildResult) => number) => worst(cases.filter((c) => c.code === code && c.size === size).map((c) => get(c.result)));
  const p99 = (size: string) => of(size, (r) => r.loop.p99);
  const weighted = (size: string) => of(size, (r) => r.timed.weightedP99);
  lines.push(`| ${code} | ${(p99('big') / p99('small')).toFixed(2)} (${f1(p99('big'))} / ${f1(p99('small'))} ms) | ${(weighted('big') / weighted('small')).toFixed(2)} (${f1(weighted('big'))} / ${f1(weighted('small'))} ms) |`);
}
const output = lines.join('\n');
console.log(output);
if (values.write) writeResultsSection({ id: 'binary-values-bench', title: 'Binary values in a watched Redis (issue 13)', command: 'node --import tsx bench/binary-values-bench.ts --old-root DIR --write', report: output });
process.exit(0);
