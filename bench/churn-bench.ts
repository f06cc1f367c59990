// Benchmark: churn (issue 28, point 2). A pool of Redis lock keys, known to the collector,
// taken and let go `--rate` times a second by another process (bench/churn-load.ts, with
// Leasehold's own client, so each grant raises the key's fence), each held for less than the
// poll interval; keyspace notifications on. Afterwards every token the load was granted is
// looked for in the store: as an acquisition the collector saw held, or inside an
// `unseen_grants` event's range (grants that came and went between two reads). Reports the
// grants made and accounted for, the rows written, the write queues
// (`leasehold_write_queue_rows`, sampled every 100 ms) and the collector's CPU. The peer is
// the same run's count of grants some read saw held: what would be kept without the counter.
//
//   node --import tsx bench/churn-bench.ts [--rate 5000] [--keys 2000] [--seconds 20] [--write]
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import Redis from 'ioredis';
import type { Config } from '../lib/config';
import { startCollector } from '../lib/collector';
import { metricsRegistry } from '../lib/metrics';
import { createBus } from '../lib/live/bus';
import { openStore } from '../lib/db/store';
import { createPostgresDatabase } from '../tests/support/databases';
import { ROOT, testServices } from '../tests/support/services';
import { accountGrants } from '../tests/support/grant-accounting';
import { log, sleep, writeResultsSection } from './support';

const { values } = parseArgs({
  options: {
    rate: { type: 'string', default: '5000' },
    keys: { type: 'string', default: '2000' },
    seconds: { type: 'string', default: '20' },
    write: { type: 'boolean', default: false },
  },
});
const RATE = Number(values.rate);
const KEYS = Number(values.keys);
const SECONDS = Number(values.seconds);
const POLL_MS = 1_000;
const HOLD = { min: 10, max: 300 };
const services = testServices();

const run = randomBytes(3).toString('hex');
const prefix = `churn${run}:`;
const storeDb = await createPostgresDatabase('lh_churn');
const store = await openStore({ kind: 'postgres', url: storeDb.url });
const redis = new Redis(services.redisUrl);
const notify = ((await redis.config('GET', 'notify-keyspace-events')) as string[])[1];
log(`redis notify-keyspace-events: "${notify}"`);

const load = fork(path.join(ROOT, 'bench', 'churn-load.ts'), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
type Done = { type: 'done'; tokens: Record<string, string[]>; pairs: number; refused: number; failed: number; seconds: number };
const ready = new Promise<void>((resolve) => load.on('message', (m: { type: string }) => m.type === 'ready' && resolve()));
const done = new Promise<Done>((resolve) => load.on('message', (m: Done) => m.type === 'done' && resolve(m)));
load.send({ type: 'setup', setup: { redisUrl: services.redisUrl, prefix, keys: KEYS, rate: RATE, seconds: SECONDS, holdMinMs: HOLD.min, holdMaxMs: HOLD.max } });
await ready;

const config = {
  sources: [{ name: 'redis', backend: 'redis', urls: [services.redisUrl], match: [`${prefix}*`], fenceSuffix: ':fence', keyspaceNotifications: 'enable' }],
  pollMs: POLL_MS,
  retention: { rollupDays: 30, eventDays: 90, renewalSamplesPerLease: 120 },
  file: null,
  store: { kind: 'postgres', url: storeDb.url },
  host: '127.0.0.1',
  port: 0,
  collectorLeaseTtlMs: 10_000,
} as Config;
const collector = startCollector({ bus: createBus(), store, config, log: () => {} });
const began = performance.now();
while ((await store.prisma.lease.count({ where: { state: 'held' } })) < KEYS) {
  if (performance.now() - began > 120_000) throw new Error(`the collector did not see the ${KEYS} keys held within 2 minutes`);
  await sleep(200);
}
await sleep(2 * POLL_MS);
log(`the collector holds the ${KEYS} keys; churn at ${RATE}/s for ${SECONDS} s`);

const queue = { changes: { max: 0, end: 0 }, renewals: { max: 0, end: 0 } };
const queueSeries: number[] = [];
const sampleQueue = async () => {
  const gauge = metricsRegistry().getSingleMetric('leasehold_write_queue_rows');
  const now = { changes: 0, renewals: 0 };
  for (const v of (await gauge?.get())?.values ?? []) now[v.labels.queue as 'changes' | 'renewals'] += v.value;
  for (const q of ['changes', 'renewals'] as const) queue[q] = { max: Math.max(queue[q].max, now[q]), end: now[q] };
  queueSeries.push(now.changes);
};
const sampler = setInterval(() => void sampleQueue(), 100);
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
const eventsBefore = await store.prisma.leaseEvent.count();
const cpuStart = process.cpuUsage();
const windowStart = performance.now();
load.send({ type: 'start' });
const result = await done;
const churnMs = performance.now() - windowStart;
// Until everything is written: a full read (every 10 polls at most) finds the last counters.
await sleep(12 * POLL_MS);
clearInterval(sampler);
await sampleQueue();
const cpu = process.cpuUsage(cpuStart);
const wallMs = performance.now() - windowStart;
loopDelay.disable();
const eventsWritten = (await store.prisma.leaseEvent.count()) - eventsBefore;
// What would be false alarms here: the load never regresses a token nor takes a held lock.
const falseAlarms = await store.prisma.leaseEvent.groupBy({ by: ['type'], where: { type: { in: ['token_regression', 'taken_over', 'observation_gap'] } }, _count: true });

// ------------------------------------------------------------ every grant, looked for
const rows = await store.prisma.leaseEvent.findMany({
  where: { type: { in: ['acquired', 'taken_over', 'unseen_grants'] }, lease: { sourceName: 'redis' } },
  select: { type: true, token: true, previousToken: true, detail: true, lease: { select: { key: true } } },
});
const { granted, lost, twice, seenHeld, unseen } = accountGrants(result.tokens, rows.map((row) => ({ ...row, key: row.lease.key })));
const cores = (cpu.user + cpu.system) / 1000 / wallMs;
const f = (x: number) => Math.round(x).toLocaleString('en');
const report = [
  `Measured ${new Date().toISOString().slice(0, 10)} on ${os.cpus()[0]?.model.trim()} (${os.cpus().length} cores), Node ${process.version}; Redis on loopback with keyspace notifications ("${notify}"); store PostgreSQL; poll every ${POLL_MS} ms. ` +
    `${KEYS.toLocaleString('en')} lock keys known to the collector, taken and let go by another process with Leasehold's client at ${RATE.toLocaleString('en')} pairs a second for ${SECONDS} s, each held ${HOLD.min}-${HOLD.max} ms.`,
  '',
  '| | |',
  '|---|---:|',
  `| pairs made (acquire + release) in ${SECONDS} s, per second; refused or failed | ${f(result.pairs)}, ${f(result.pairs / SECONDS)}/s; ${f(result.refused + result.failed)} |`,
  `| grants made (tokens) | ${f(granted)} |`,
  `| of them accounted for in the store | ${f(granted - lost)} |`,
  `| lost (no event holds the token) | ${f(lost)} |`,
  `| accounted for twice | ${f(twice)} |`,
  `| seen held by a read (an acquisition with its holder) | ${f(seenHeld)} (${((100 * seenHeld) / Math.max(1, granted)).toFixed(1)} %) |`,
  `| counted from the fence (unseen_grants) | ${f(unseen)} (${((100 * unseen) / Math.max(1, granted)).toFixed(1)} %) |`,
  `| token regressions, takeovers, observation gaps recorded (none happened) | ${['token_regression', 'taken_over', 'observation_gap'].map((type) => falseAlarms.find((g) => g.type === type)?._count ?? 0).join(', ')} |`,
  `| lease events written, per second of churn | ${f(eventsWritten)}, ${f(eventsWritten / (churnMs / 1000))}/s |`,
  `| state-change rows waiting to be written: max / at the end | ${f(queue.changes.max)} / ${f(queue.changes.end)} |`,
  `| the same, p50 of 100 ms samples during the churn | ${f([...queueSeries].sort((a, b) => a - b)[Math.floor(queueSeries.length / 2)] ?? 0)} |`,
  `| collector CPU (cores), event loop delay p99 / max | ${cores.toFixed(2)}, ${f(loopDelay.percentile(99) / 1e6)} / ${f(loopDelay.max / 1e6)} ms |`,
].join('\n');
console.log(report);
if (values.write) writeResultsSection({ id: 'churn-bench', title: 'Churn: short Redis locks, every grant accounted for (issue 28)', command: 'node --import tsx bench/churn-bench.ts --write', report });

load.kill('SIGTERM');
await collector.stop();
await store.close();
let cursor = '0';
do {
  const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 5_000);
  cursor = next;
  if (keys.length) await redis.del(...keys);
} while (cursor !== '0');
redis.disconnect();
await storeDb.drop();
process.exit(0);
