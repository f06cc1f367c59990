// Benchmark (issue 17): from the instant a lease's deadline passes to the `alert.firing`
// missed_renewal webhook received, per backend (a PostgreSQL lease table, Redis, etcd), with
// 1,000 and 10,000 leases observed and 1,000 renewals a second going on; and the collector's
// CPU with alerts on.
//
// The leases are spread evenly over the three backends and renewed by another process
// (bench/alerts-load.ts) at 1,000 renewals a second in all, round robin, so each is renewed
// every N/1,000 s; its TTL is three times that (3 s at 1,000 leases, 30 s at 10,000). In each
// phase that process stops renewing some victims (per backend, spaced evenly over the window),
// each after a last renewal of its own whose expiry the backend reports (see alerts-load.ts),
// and receives the webhooks: latency = receipt − deadline, both on its clock.
//
// Each size runs these collectors one after another on the same leases and load, each on a
// fresh PostgreSQL store with one webhook endpoint (native format) and the default rules,
// polling every second (the default), alerts on, in this process (its CPU is the collector's):
//   ours        Leasehold as it ships: deadline timers, Redis keyspace notifications, etcd watch.
//   poll        the peer: no deadline timers and no Redis keyspace notifications, so an expiry
//               is seen at the next 1 s poll (etcd keeps its watch: there is no switch for it,
//               and watching is how etcd is observed).
//   timers-off  no deadline timers, pushes on: the collector as it was before the timers.
//
//   node --import tsx bench/alerts-bench.ts [--sizes 1000,10000] [--victims 100] [--window 20] [--min-ttl 10] [--write]
//   node --import tsx bench/alerts-bench.ts --quick      (1,000 leases, 10 victims, a 4 s window)
//
// Needs the test services (`bash scripts/services.sh up`). With --write, replaces the alerts
// section of bench/RESULTS.md.
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Etcd3 } from 'etcd3';
import Redis from 'ioredis';
import pg from 'pg';
import { generateWebhookSecret } from '../lib/alerts/deliver/secret';
import { applyAlertWrites } from '../lib/db/alerts';
import { NO_FACTS } from '../lib/domain/alert-rules';
import { listDeliveries } from '../lib/db/deliveries';
import { openStore, type Store } from '../lib/db/store';
import { ALERT_RULE_TYPES } from '../lib/domain/alert-types';
import { createWebhook } from '../lib/db/webhooks';
import { metricsRegistry } from '../lib/metrics';
import { testCollector } from '../tests/support/collector';
import { createPostgresDatabase } from '../tests/support/databases';
import { ROOT, testServices } from '../tests/support/services';
// Types only: importing alerts-load.ts itself would run it.
import type { Backend, FromLoad, PhaseOutcome, ToLoad } from './alerts-load';
import { grantEtcdLeases, removeSeededLeases, seedPgLeases, seedRedisLeases } from './seed-leases';
import { log, percentile, sleep, writeResultsSection } from './support';
import { ingestReport, startIngest, type IngestResult } from './telemetry-ingest';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '1000,10000' },
    victims: { type: 'string', default: '100' },
    window: { type: 'string', default: '20' },
    tail: { type: 'string', default: '20' },
    'min-ttl': { type: 'string', default: '10' },
    variants: { type: 'string', default: 'ours,poll,timers-off' },
    quick: { type: 'boolean', default: false },
    write: { type: 'boolean', default: false },
    verbose: { type: 'boolean', default: false },
  },
});
const sizes = values.quick ? [1000] : values.sizes.split(',').map(Number);
const victimsPerBackend = values.quick ? 10 : Number(values.victims);
const windowMs = (values.quick ? 4 : Number(values.window)) * 1000;
const tailMs = Number(values.tail) * 1000;
type Variant = 'ours' | 'poll' | 'timers-off' | 'telemetry';
const VARIANTS: Variant[] = ['ours', 'poll', 'timers-off', 'telemetry'];
const variants = values.variants.split(',').filter((v): v is Variant => (VARIANTS as string[]).includes(v));
const BACKENDS: Backend[] = ['pg', 'redis', 'etcd'];
const services = testServices();
// The collector's own log (one line per alert fired) is left out of the report on stdout.
if (!values.verbose) process.env.LEASEHOLD_LOG_LEVEL ??= 'warn';
// Its endpoints' signing secrets are sealed (lib/db/secret-box.ts): with a key of the run's own, unless one is given.
process.env.LEASEHOLD_SECRET_KEY ||= randomBytes(32).toString('base64');
const POLL_MS = 1_000;
const RENEWALS_PER_SECOND = 1_000;
/** Before the victims: the first read written, and every etcd lease's TTL read (at most 1,000 a poll). */
const SETTLE_MS = 5_000;

type PhaseResult = {
  variant: Variant;
  /** The telemetry collector's: what it took of holders' reports, and how long each request took. */
  ingested?: IngestResult;
  outcome: PhaseOutcome;
  cores: number;
  loopP99: number;
  loopMax: number;
  deadlineReads: number;
  firstReadS: number;
  /** Per backend: deadline -> the alert written to the store (its startedAt), and written -> received (ms). */
  written: Record<Backend, number[]>;
  delivered: Record<Backend, number[]>;
};
type SizeResult = { size: number; ttlMs: number; setupS: number; phases: PhaseResult[] };

async function deadlineReadsSoFar(): Promise<number> {
  const metric = metricsRegistry().getSingleMetric('leasehold_deadline_reads_total');
  if (!metric) return 0;
  const { values: series } = await metric.get();
  return series.reduce((sum, s) => sum + s.value, 0);
}

function nextMessage<T extends FromLoad['type']>(child: ChildProcess, type: T): Promise<Extract<FromLoad, { type: T }>> {
  return new Promise((resolve) => {
    const on = (message: FromLoad) => {
      if (message.type !== type) return;
      child.off('message', on);
      resolve(message as Extract<FromLoad, { type: T }>);
    };
    child.on('message', on);
  });
}

async function runSize(size: number, sizeIndex: number): Promise<SizeResult> {
  const run = randomBytes(3).toString('hex');
  const perBackend = Math.floor(size / 3);
  const counts: Record<Backend, number> = { pg: perBackend, redis: size - 2 * perBackend, etcd: perBackend };
  // 1,000 renewals a second over `size` leases: each every size/1,000 s. The TTL is three times
  // that, and at least --min-ttl seconds (10 by default; see RESULTS.md on 3 s TTLs).
  const ttlMs = Math.max(Number(values['min-ttl']) * 1000, 3 * Math.round((size / RENEWALS_PER_SECOND) * 1000));
  const setupStarted = performance.now();

  // ---------------------------------------------------------------- the observed leases
  const sourceDb = await createPostgresDatabase('lh_absrc');
  const sql = new pg.Client(sourceDb.url);
  await sql.connect();
  await seedPgLeases(sql, counts.pg, ttlMs);
  const redis = new Redis(services.redisUrl);
  const redisPrefix = `abench${run}:`;
  await seedRedisLeases(redis, redisPrefix, counts.redis, ttlMs);
  const etcdPrefix = `abench${run}/`;
  const load = fork(path.join(ROOT, 'bench', 'alerts-load.ts'), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const tell = (message: ToLoad) => load.send(message);
  const ready = nextMessage(load, 'ready');
  tell({ type: 'setup', setup: { sourceDbUrl: sourceDb.url, redisUrl: services.redisUrl, redisPrefix, etcdPrefix, etcdEndpoints: services.etcdEndpoints, counts, ttlMs, renewalsPerSecond: RENEWALS_PER_SECOND } });
  const { receiverUrl } = await ready;
  // The etcd leases, each handed to the holders' process as soon as it is granted.
  const etcd = new Etcd3({ hosts: services.etcdEndpoints });
  await grantEtcdLeases(etcd, etcdPrefix, counts.etcd, ttlMs, (ids) => tell({ type: 'etcd', ids }));
  const setupS = (performance.now() - setupStarted) / 1000;
  log(`  ${size}: ${counts.pg} pg rows, ${counts.redis} redis keys, ${counts.etcd} etcd keys in ${setupS.toFixed(0)} s; TTL ${ttlMs / 1000} s`);

  // ---------------------------------------------------------------- one collector after another
  const phases: PhaseResult[] = [];
  // The order turns from one size to the next, so no collector always runs first.
  const order = variants.map((_, k) => variants[(k + sizeIndex) % variants.length]!);
  for (const [phaseIndex, variant] of order.entries()) {
    const name = `${size}-${variant}`;
    const storeDb = await createPostgresDatabase('lh_abench');
    const store = await openStore({ kind: 'postgres', url: storeDb.url });
    const secret = generateWebhookSecret();
    tell({ type: 'secret', secret });
    // Every rule but force_action, which the warm-up below raises, to an endpoint of its own.
    await createWebhook(store, { name: `bench-${variant}`, url: `${receiverUrl}/${name}`, format: 'native', secret, routingKey: null, rules: ALERT_RULE_TYPES.filter((t) => t !== 'force_action') });
    const warmup = await createWebhook(store, { name: `warmup-${variant}`, url: `${receiverUrl}/${name}-warmup`, format: 'native', secret, routingKey: null, rules: ['force_action'] });
    const started = performance.now();
    const collector = testCollector(
      store,
      [
        { name: 'pg', backend: 'postgres', url: sourceDb.url, tables: [{ table: 'leases', format: 'leasehold' }], advisoryLocks: false },
        { name: 'redis', backend: 'redis', urls: [services.redisUrl], match: [`${redisPrefix}*`], fenceSuffix: ':fence', keyspaceNotifications: variant === 'poll' ? 'off' : 'auto' },
        { name: 'etcd', backend: 'etcd', endpoints: services.etcdEndpoints, prefixes: [etcdPrefix] },
      ],
      {
        pollMs: POLL_MS,
        alerts: {},
        log: values.verbose ? (line) => log(`    collector: ${line}`) : () => {},
        ...(variant === 'ours' || variant === 'telemetry' ? {} : { deadlineTimers: false as const }),
      },
    );
    for (let polls = 1; (await store.prisma.lease.count({ where: { state: 'held' } })) < size; polls++) {
      if (polls % 25 === 0) {
        const bySource = await store.prisma.lease.groupBy({ by: ['sourceName', 'state'], _count: true });
        log(`    waiting for the first reads: ${bySource.map((g) => `${g.sourceName} ${g.state} ${g._count}`).join(', ')}`);
      }
      if (performance.now() - started > 120_000) throw new Error(`the collector did not show ${size} leases held within 2 minutes`);
      await sleep(200);
    }
    const firstReadS = (performance.now() - started) / 1000;
    await sleep(SETTLE_MS);
    // Warm-up, measured by nobody: a few alerts through the store and the worker to the
    // receiver, so that the victims' are not this process's first (pool connections, the
    // receiver's keep-alive connection, code not yet compiled by the JIT).
    await warmUp(store, warmup.id);

    // Victims: spread over each backend's leases, other ones in each phase.
    const victims = Object.fromEntries(
      BACKENDS.map((b) => [b, Array.from({ length: Math.min(victimsPerBackend, counts[b]) }, (_, j) => Math.floor((((j + 0.5 + 0.31 * phaseIndex) / victimsPerBackend) * counts[b]) % counts[b]))]),
    ) as Record<Backend, number[]>;
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    const readsBefore = await deadlineReadsSoFar();
    const cpuStart = process.cpuUsage();
    const windowStart = performance.now();
    const done = nextMessage(load, 'phase-done');
    // The telemetry collector also takes holders' reports at 5,000 renewals a second, in this process, as a console would.
    const ingest = variant === 'telemetry' ? startIngest(store, counts.pg, new Set(victims.pg)) : null;
    tell({ type: 'phase', phase: { name, secret, victims, windowMs, tailMs } });
    const { outcome } = await done;
    const ingested = await ingest?.stop();
    const cpu = process.cpuUsage(cpuStart);
    const wallMs = performance.now() - windowStart;
    loopDelay.disable();
    // Where the time went: the alert's startedAt is when the engine wrote it (on this process's clock).
    const alerts = await store.prisma.alert.findMany({ where: { ruleType: 'missed_renewal' }, select: { leaseId: true, startedAt: true } });
    const startedAt = new Map(alerts.map((a) => [a.leaseId, a.startedAt.getTime()]));
    const written: Record<Backend, number[]> = { pg: [], redis: [], etcd: [] };
    const delivered: Record<Backend, number[]> = { pg: [], redis: [], etcd: [] };
    for (const v of outcome.victims) {
      const at = startedAt.get(v.leaseId);
      if (at === undefined) continue;
      written[v.backend].push(at - v.deadline);
      delivered[v.backend].push(v.received - at);
    }
    const result: PhaseResult = {
      variant,
      ingested,
      outcome,
      cores: (cpu.user + cpu.system) / 1000 / wallMs,
      loopP99: loopDelay.percentile(99) / 1e6,
      loopMax: loopDelay.max / 1e6,
      deadlineReads: (await deadlineReadsSoFar()) - readsBefore,
      firstReadS,
      written,
      delivered,
    };
    phases.push(result);
    log(`  ${name}: ${BACKENDS.map((b) => `${b} p50 ${fmt(percentile(outcome.latencies[b], 50))} p99 ${fmt(percentile(outcome.latencies[b], 99))} ms (${outcome.latencies[b].length})`).join('; ')}; CPU ${result.cores.toFixed(2)}; ${Math.round(wallMs / 1000)} s`);
    if (values.verbose) for (const b of BACKENDS) log(`    ${b}: written ${written[b].map(Math.round).join(' ')}; delivered ${delivered[b].map(Math.round).join(' ')}`);
    if (values.verbose && Object.keys(outcome.others).length) log(`    other webhooks: ${JSON.stringify(outcome.others)}`);

    await collector.stop();
    await store.close();
    await storeDb.drop();
    const revived = nextMessage(load, 'revived');
    tell({ type: 'revive' });
    await revived;
  }

  // ---------------------------------------------------------------- clean up
  load.kill('SIGTERM');
  await sql.end();
  await removeSeededLeases(redis, redisPrefix, etcd, etcdPrefix);
  redis.disconnect();
  etcd.close();
  await sourceDb.drop();
  return { size, ttlMs, setupS, phases };
}

function fmt(x: number): string {
  if (Number.isNaN(x)) return '—';
  return x < 10 ? x.toFixed(1) : Math.round(x).toLocaleString('en');
}

async function versions(): Promise<string> {
  const redis = new Redis(services.redisUrl);
  const info = await redis.info('server');
  redis.disconnect();
  const sql = new pg.Client(services.databaseUrl);
  await sql.connect();
  const { rows } = await sql.query<{ server_version: string }>('SHOW server_version');
  await sql.end();
  const etcd = new Etcd3({ hosts: services.etcdEndpoints });
  const status = await etcd.maintenance.status();
  etcd.close();
  return `redis-server ${/redis_version:(\S+)/.exec(info)?.[1] ?? '?'}, PostgreSQL ${rows[0]?.server_version ?? '?'}, etcd ${status.version} (one member)`;
}

const VARIANT_LABEL: Record<Variant, string> = {
  ours: 'Leasehold (deadline timers)',
  poll: 'peer: polls every 1 s',
  'timers-off': 'no timers, pushes on',
  telemetry: 'Leasehold, taking 5,000 reported renewals/s',
};
const BACKEND_LABEL: Record<Backend, string> = { pg: 'Postgres lease table', redis: 'Redis', etcd: 'etcd' };

function report(results: SizeResult[], header: { started: string; load: [number[], number[]]; versions: string }): string {
  const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(' / ');
  const lines = [
    `Measured ${header.started} on ${os.cpus()[0]?.model.trim()} (${os.cpus().length} cores), ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}; ${header.versions}, all on loopback; ` +
      `load average ${load(header.load[0])} at the start, ${load(header.load[1])} at the end. Leases spread evenly over the three backends, renewed by another process at ${RENEWALS_PER_SECOND.toLocaleString('en')} renewals a second in all ` +
      `(TTL ${results.map((r) => `${r.ttlMs / 1000} s at ${r.size.toLocaleString('en')}`).join(', ')}: three renewal intervals, at least 10 s); per collector ${victimsPerBackend} victims per backend, their last renewals spaced evenly over ${windowMs / 1000} s; ` +
      `store PostgreSQL, poll every ${POLL_MS} ms, alerts on, one native webhook endpoint (a node:http receiver verifying signatures, in the holders' process). Latency: from the victim's deadline (its expiry as the backend records it) to its \`alert.firing\` missed_renewal received.`,
    '',
  ];
  // Columns in the order ours, the peer, their ratio, then the collector without timers (each when run).
  const withRatio = variants.includes('ours') && variants.includes('poll');
  const shown = VARIANTS.filter((v) => variants.includes(v));
  const heads = shown.flatMap((v) => [`${VARIANT_LABEL[v]} p50 / p99 / max`, ...(v === 'poll' && withRatio ? ['ours / peer, p50 / p99'] : [])]);
  lines.push(`| leases | backend | ${heads.join(' | ')} | alerts received (${shown.join(' / ')}) |`, `|---:|---|${heads.map((h) => (h.startsWith('ours /') ? '---:|' : '---|')).join('')}---|`);
  for (const r of results) {
    for (const b of BACKENDS) {
      const of = (v: Variant) => r.phases.find((p) => p.variant === v);
      const xs = (v: Variant) => of(v)?.outcome.latencies[b] ?? [];
      const cells = shown.flatMap((v) => {
        const cell = `${fmt(percentile(xs(v), 50))} / ${fmt(percentile(xs(v), 99))} / ${fmt(xs(v).length ? Math.max(...xs(v)) : NaN)} ms`;
        if (v !== 'poll' || !withRatio) return [cell];
        const ratio = (p: number) => (percentile(xs('ours'), p) / percentile(xs('poll'), p)).toFixed(2);
        return [cell, `${ratio(50)} / ${ratio(99)}`];
      });
      const received = shown.map((v) => {
        const o = of(v)?.outcome;
        return o ? `${o.latencies[b].length}${o.missing[b] ? ` (${o.missing[b]} missing)` : ''}` : '—';
      });
      lines.push(`| ${r.size.toLocaleString('en')} | ${BACKEND_LABEL[b]} | ${cells.join(' | ')} | ${received.join(' / ')} |`);
    }
  }
  lines.push(
    '',
    '| leases | collector | CPU (cores) | event loop delay p99 / max | reads asked by deadline timers | renewals/s made | last renewal answered within (pg / redis / etcd) | first read written after | other webhooks, from the collector\'s start |',
    '|---:|---|---:|---|---:|---:|---|---:|---|',
  );
  for (const r of results) {
    for (const p of r.phases) {
      const o = p.outcome;
      const others = Object.entries(o.others).map(([what, n]) => `${n} × ${what}`).join('; ') || 'none';
      lines.push(
        `| ${r.size.toLocaleString('en')} | ${VARIANT_LABEL[p.variant]} | ${p.cores.toFixed(2)} | ${fmt(p.loopP99)} / ${fmt(p.loopMax)} ms | ${p.variant === 'ours' || p.variant === 'telemetry' ? p.deadlineReads.toLocaleString('en') : '—'} | ${Math.round(o.renewalsPerSecond).toLocaleString('en')} | ${BACKENDS.map((b) => fmt(o.lastRenewalRttMs[b])).join(' / ')} ms | ${p.firstReadS.toFixed(1)} s | ${others}${o.unverified ? `; ${o.unverified} unverified` : ''} |`,
      );
    }
  }
  lines.push(
    '',
    'Where the time went: from the deadline to the alert written to the store (the engine\'s transaction with its delivery row), and from then to the webhook received (the worker claiming, signing and sending it); p50 / p99 / max.',
    '',
    '| leases | backend | collector | deadline → alert written | written → webhook received |',
    '|---:|---|---|---|---|',
  );
  const spread = (xs: number[]) => `${fmt(percentile(xs, 50))} / ${fmt(percentile(xs, 99))} / ${fmt(xs.length ? Math.max(...xs) : NaN)} ms`;
  for (const r of results) {
    for (const b of BACKENDS) {
      for (const p of r.phases) lines.push(`| ${r.size.toLocaleString('en')} | ${BACKEND_LABEL[b]} | ${VARIANT_LABEL[p.variant]} | ${spread(p.written[b])} | ${spread(p.delivered[b])} |`);
    }
  }
  lines.push('', `Each collector's window: from the first victim's last renewal until every victim's alert arrived, or ${tailMs / 1000} s after the last deadline; CPU is this process's (the collector with its alert engine and delivery worker) over that window. Before it, each collector sends five warm-up alerts (force_action, to an endpoint of their own) through the store and its worker, not measured, so that the victims' alerts are not the process's first.`);
  return lines.join('\n');
}

const header = { started: new Date().toISOString().slice(0, 10), load: [os.loadavg(), os.loadavg()] as [number[], number[]], versions: await versions() };
const results: SizeResult[] = [];
for (const [k, size] of sizes.entries()) {
  log(`size ${size}`);
  results.push(await runSize(size, k));
}
header.load[1] = os.loadavg();
const ingest = variants.includes('telemetry') ? ingestReport(results.flatMap((r) => r.phases.map((p) => ({ size: r.size, variant: p.variant, latencies: p.outcome.latencies, ingested: p.ingested })))) : null;
const output = ingest ? `${report(results, header)}\n\n${ingest}` : report(results, header);
console.log(output);
if (values.write && ingest) {
  // Its own section: the run compares ours with and without holders' reports, and leaves the issue 17 figures as they are.
  writeResultsSection({ id: 'telemetry-bench', title: "Holders' reports: 5,000 renewals a second taken while alerts run (issue 27)", command: 'node --import tsx bench/alerts-bench.ts --sizes 1000 --variants ours,telemetry --write', report: output });
} else if (values.write) {
  writeResultsSection({ id: 'alerts-bench', title: 'Alert webhooks: from a missed deadline to the webhook (issue 17)', command: 'node --import tsx bench/alerts-bench.ts --write', report: output });
}
process.exit(0);

/** Five force_action alerts raised and delivered to the warm-up endpoint, before the victims. */
async function warmUp(store: Store, webhookId: string) {
  const writes = Array.from({ length: 5 }, (_, i) => ({
    op: 'raise' as const,
    fingerprint: `warmup${i}${randomBytes(8).toString('hex')}`,
    rule: { id: 'bench-warmup', name: 'warm-up', type: 'force_action' as const },
    severity: 'info' as const,
    source: 'bench',
    leaseId: `bench/warmup-${i}`,
    leaseKey: `warmup-${i}`,
    summary: 'warm-up',
    facts: NO_FACTS,
    resolveAfterMs: null,
  }));
  for (const write of writes) {
    await applyAlertWrites(store, [write], { linkOf: () => null });
    store.outbox.changed();
  }
  for (let waited = 0; (await listDeliveries(store, { webhookId })).filter((d) => d.status === 'delivered').length < writes.length; waited += 100) {
    if (waited > 30_000) throw new Error('the warm-up alerts were not delivered within 30 s');
    await sleep(100);
  }
}
