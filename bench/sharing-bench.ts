// Benchmark: a million leases split across four collector processes (issue 28, point 3). One
// Redis keyspace of `--leases` lock keys (hex ids), configured as four sources of disjoint
// patterns (docs/deployment.md, "Splitting one source across collectors"), observed by four
// `leasehold collect` processes on one PostgreSQL store. Reports: how the parts were shared
// out; the time until every lease is in the store; each collector's resident memory and CPU
// over a steady window; a change's time from the write to Redis until its row shows it in
// the store (p50/p99, one change every 250 ms); then one collector killed: when its part had
// a new owner, and what the store recorded for that part meanwhile (only the changes made).
// The peer is the same keyspace as one source observed by one collector, in the same run.
//
//   node --import tsx bench/sharing-bench.ts [--leases 1000000] [--seconds 30] [--write]
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import Redis from 'ioredis';
import pg from 'pg';
import { createPostgresDatabase } from '../tests/support/databases';
import { ROOT, testServices } from '../tests/support/services';
import { log, percentile, sleep, writeResultsSection } from './support';

const { values } = parseArgs({ options: { leases: { type: 'string', default: '1000000' }, seconds: { type: 'string', default: '30' }, write: { type: 'boolean', default: false } } });
const LEASES = Number(values.leases);
const SECONDS = Number(values.seconds);
const PARTS = ['[0-3]', '[4-7]', '[89ab]', '[c-f]'];
const TTL_MS = 10_000;
const services = testServices();
const scratch = mkdtempSync(path.join(os.tmpdir(), 'leasehold-sharing-bench-'));
const run = randomBytes(3).toString('hex');
const prefix = `shb${run}:`;
const keyAt = (i: number) => `${prefix}${(i * 2654435761 >>> 0).toString(16).padStart(8, '0')}${i.toString(36)}`;

const redis = new Redis(services.redisUrl);
log(`seeding ${LEASES.toLocaleString('en')} keys`);
for (let i = 0; i < LEASES; i += 10_000) {
  const pipeline = redis.pipeline();
  for (let j = i; j < Math.min(LEASES, i + 10_000); j++) pipeline.set(keyAt(j), `worker-${j % 50}`, 'PX', 7_200_000);
  await pipeline.exec();
}

/** CPU seconds (user + system) and resident MB of a process, from /proc. */
function usage(pid: number): { cpuS: number; rssMb: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return { cpuS: (Number(stat[11]) + Number(stat[12])) / 100, rssMb: Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024 };
}

type Shape = { name: string; sources: { name: string; match: string[] }[]; collectors: number };
type Outcome = { shape: Shape; firstS: number; owners: Record<string, string | null>; perCollector: { pid: number; cores: number; rssMb: number; owns: string[] }[]; latency: { p50: number; p99: number; n: number }; kill?: { takenMs: number; movedMs: number; seenMs: number; part: string; eventsMeanwhile: Record<string, number> } };

async function measure(shape: Shape, kill: boolean): Promise<Outcome> {
  const db = await createPostgresDatabase('lh_shbench');
  const sql = new pg.Client(db.url);
  await sql.connect();
  const configFile = path.join(scratch, `${shape.name}.json`);
  writeFileSync(configFile, JSON.stringify({ pollMs: 1_000, sources: shape.sources.map((s) => ({ ...s, backend: 'redis', urls: [services.redisUrl], keyspaceNotifications: 'auto' })) }));
  const children: ChildProcess[] = [];
  // The node process itself (not a wrapper): its /proc figures are the collector's.
  for (let i = 0; i < shape.collectors; i++) {
    children.push(spawn(process.execPath, ['--import', 'tsx', 'bin/leasehold.ts', 'collect'], { cwd: ROOT, env: { ...process.env, DATABASE_URL: db.url, LEASEHOLD_CONFIG: configFile, LEASEHOLD_COLLECTOR_LEASE_TTL_MS: String(TTL_MS) }, stdio: 'ignore' }));
  }
  const started = performance.now();
  const expected = shape.collectors === 1 ? Array.from({ length: LEASES }, (_, i) => keyAt(i)).filter((key) => new RegExp(`^${PARTS[0]}`).test(key.slice(prefix.length))).length : LEASES;
  const count = async () => Number((await sql.query('SELECT count(*)::int AS n FROM "Lease"').catch(() => ({ rows: [{ n: 0 }] }))).rows[0].n);
  for (let last = -1; ; ) {
    const n = await count();
    if (n >= expected) break;
    if (n !== last) log(`  ${shape.name}: ${n.toLocaleString('en')} leases in the store after ${((performance.now() - started) / 1000).toFixed(0)} s`);
    last = n;
    if (performance.now() - started > 1_800_000) throw new Error('not every lease was in the store within 30 minutes');
    await sleep(3_000);
  }
  const firstS = (performance.now() - started) / 1000;
  await sleep(5_000);
  const ownerRows = async () => Object.fromEntries((await sql.query('SELECT name, "collectorId" AS id FROM "Source" ORDER BY name')).rows.map((r: { name: string; id: string | null }) => [r.name, r.id]));
  const owners = await ownerRows();

  // The steady window: CPU and memory per collector, and changes made one every 250 ms.
  const before = children.map((c) => usage(c.pid!));
  const latencies: number[] = [];
  const windowStart = performance.now();
  for (let change = 0; performance.now() - windowStart < SECONDS * 1000; change++) {
    let i = (change * 7919) % LEASES;
    // The peer sees only its part: its changes are made there.
    while (shape.collectors === 1 && !new RegExp(`^${PARTS[0]}`).test(keyAt(i).slice(prefix.length))) i = (i + 1) % LEASES;
    const holder = `moved-${change}`;
    const sentAt = performance.now();
    await redis.set(keyAt(i), holder, 'KEEPTTL');
    const part = shape.sources.find((s) => s.match.some((m) => new RegExp(`^${m.slice(prefix.length).replace('*', '')}`).test(keyAt(i).slice(prefix.length))))!.name;
    while (performance.now() - sentAt < 10_000) {
      const row = await sql.query('SELECT holder FROM "Lease" WHERE id = $1', [`${part}/${keyAt(i)}`]);
      if (row.rows[0]?.holder === holder) break;
      await sleep(10);
    }
    latencies.push(performance.now() - sentAt);
    await sleep(Math.max(0, 250 - (performance.now() - sentAt)));
  }
  const wallS = (performance.now() - windowStart) / 1000;
  const perCollector = children.map((c, index) => {
    const now = usage(c.pid!);
    return { pid: c.pid!, cores: (now.cpuS - before[index]!.cpuS) / wallS, rssMb: now.rssMb, owns: Object.entries(owners).filter(([, id]) => Number(id?.split(':')[1]) === c.pid).map(([name]) => name) };
  });
  const outcome: Outcome = { shape, firstS, owners, perCollector, latency: { p50: percentile(latencies, 50), p99: percentile(latencies, 99), n: latencies.length } };

  if (kill) {
    const part = shape.sources[0]!.name;
    const victim = children.find((c) => Number(owners[part]?.split(':')[1]) === c.pid)!;
    const maxId = Number((await sql.query('SELECT coalesce(max(id), 0)::bigint AS id FROM "LeaseEvent"')).rows[0].id);
    victim.kill('SIGKILL');
    const killedAt = performance.now();
    // While nobody watches the part, five of its keys change hands: the new owner must record
    // each as an observation_gap, and nothing else.
    const inPart = Array.from({ length: 5000 }, (_, j) => keyAt(j)).filter((key) => new RegExp(`^${PARTS[0]}`).test(key.slice(prefix.length))).slice(0, 5);
    for (const key of inPart) await redis.set(key, 'while-nobody-watched', 'KEEPTTL');
    const leaseOwner = async () => (await sql.query(`SELECT owner FROM "CollectorLease" WHERE name = $1 AND expires_at > now()`, [`source:${part}`])).rows[0]?.owner ?? null;
    const victimOwner = (await sql.query(`SELECT owner FROM "CollectorLease" WHERE name = $1`, [`source:${part}`])).rows[0]?.owner;
    let takenMs = 0;
    for (;;) {
      const owner = await leaseOwner();
      if (!takenMs && owner !== null && owner !== victimOwner) takenMs = performance.now() - killedAt;
      if (takenMs && (await ownerRows())[part] !== owners[part]) break;
      await sleep(50);
    }
    const movedMs = performance.now() - killedAt;
    // Until the new owner's first read of the part is written: the five changes show.
    const shown = async () => Number((await sql.query(`SELECT count(*)::int AS n FROM "Lease" WHERE id = ANY($1) AND holder = 'while-nobody-watched'`, [inPart.map((key) => `${part}/${key}`)])).rows[0].n);
    while ((await shown()) < inPart.length && performance.now() - killedAt < 300_000) await sleep(500);
    const seenMs = performance.now() - killedAt;
    await sleep(2_000);
    const events = await sql.query('SELECT e.type, count(*)::int AS n FROM "LeaseEvent" e JOIN "Lease" l ON l.id = e."leaseId" WHERE e.id > $1 AND l."sourceName" = $2 GROUP BY e.type', [maxId, part]);
    outcome.kill = { takenMs, movedMs, seenMs, part, eventsMeanwhile: Object.fromEntries(events.rows.map((r: { type: string; n: number }) => [r.type, r.n])) };
  }
  for (const child of children) child.kill('SIGKILL');
  await sql.end();
  await sleep(1_000);
  await db.drop();
  return outcome;
}

const split: Shape = { name: 'four parts, four collectors', collectors: 4, sources: PARTS.map((part, i) => ({ name: `part-${i}`, match: [`${prefix}${part}*`] })) };
// The peer: one collector alone with one part's keys (a quarter), as a collector was before
// sources were shared out; the whole keyspace in one process is past what one holds here.
const whole: Shape = { name: 'peer: one collector alone, one part', collectors: 1, sources: [{ name: 'part-0', match: [`${prefix}${PARTS[0]}*`] }] };
const results: Outcome[] = [];
for (const [shape, kill] of [[split, true], [whole, false]] as const) {
  log(`${shape.name}`);
  results.push(await measure(shape, kill));
  log(JSON.stringify(results.at(-1)));
}

const f = (x: number) => (x < 10 ? x.toFixed(1) : Math.round(x).toLocaleString('en'));
const lines = [
  `Measured ${new Date().toISOString().slice(0, 10)} on ${os.cpus()[0]?.model.trim()} (${os.cpus().length} cores), Node ${process.version}; Redis and the PostgreSQL store on loopback, on the same 2 cores as the collectors; ${LEASES.toLocaleString('en')} Redis lock keys (hex ids, no renewals); poll every 1,000 ms; ownership TTL ${TTL_MS / 1000} s. A change: SET of a key's value, until its row in the store shows the new holder (the store read every 10 ms), one every 250 ms for ${SECONDS} s.`,
  '',
  '| | its leases in the store | collectors: leases owned, CPU (cores), resident memory | change in the store p50 / p99 |',
  '|---|---:|---|---:|',
];
for (const r of results) {
  const each = r.perCollector.map((c) => `${c.owns.join('+') || 'nothing'}: ${f(c.cores)} cores, ${f(c.rssMb)} MB`).join('; ');
  lines.push(`| ${r.shape.name} | ${f(r.firstS)} s | ${each} | ${f(r.latency.p50)} / ${f(r.latency.p99)} ms (${r.latency.n}) |`);
}
const killed = results[0]!.kill!;
lines.push('', `One collector killed (SIGKILL): ${killed.part}'s ownership lease was taken by another ${f(killed.takenMs)} ms later (ownership TTL ${TTL_MS.toLocaleString('en')} ms), and its source row named the new owner (after its first read of the part) ${f(killed.movedMs)} ms after the kill. Five of its keys changed hands while nobody watched it: the store showed all five ${f(killed.seenMs)} ms after the kill, and the events recorded for ${killed.part} since the kill were, by type: ${Object.entries(killed.eventsMeanwhile).map(([t, n]) => `${t} ${n}`).join(', ') || 'none'}.`);
const report = lines.join('\n');
console.log(report);
if (values.write) writeResultsSection({ id: 'sharing-bench', title: 'A million leases over four collectors (issue 28)', command: 'node --import tsx bench/sharing-bench.ts --write', report });

log('removing the keys');
let cursor = '0';
do {
  const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 10_000);
  cursor = next;
  if (keys.length) await redis.unlink(...keys);
} while (cursor !== '0');
redis.disconnect();
rmSync(scratch, { recursive: true, force: true });
process.exit(0);
