// The holders' side of bench/alerts-bench.ts, in a process of its own so that none of its work
// is counted as the collector's:
//   - renews the leases at a fixed total rate (1,000 a second), round robin over the leases
//     still held, in ticks of 100 ms (PostgreSQL: UPDATE expires_at; Redis: PEXPIRE; etcd: a
//     keepalive on one stream);
//   - in each phase, stops renewing some victims, one at a time, spaced out: each victim's last
//     renewal is made alone, and its deadline is the expiry as the backend records it
//     (PostgreSQL: expires_at RETURNING; Redis: PEXPIRETIME after the PEXPIRE, in one script;
//     etcd: the time the keepalive was sent + the TTL, the earliest it can be);
//   - receives the webhooks (tests/support/webhook-receiver.ts: a node:http server that verifies
//     each signature with the standardwebhooks package), and times each victim's first
//     `alert.firing` missed_renewal from its deadline, on this process's clock;
//   - between phases, gives the victims a new grant, so every phase starts with every lease held.
import { Etcd3 } from 'etcd3';
import Redis from 'ioredis';
import pg from 'pg';
import type { AlertMessage } from '../lib/domain/alert-types';
import { startReceiver } from '../tests/support/webhook-receiver';

export type Backend = 'pg' | 'redis' | 'etcd';
const BACKENDS: Backend[] = ['pg', 'redis', 'etcd'];

export type LoadSetup = {
  sourceDbUrl: string;
  redisUrl: string;
  redisPrefix: string;
  etcdPrefix: string;
  etcdEndpoints: string[];
  counts: Record<Backend, number>;
  ttlMs: number;
  renewalsPerSecond: number;
};

export type PhaseOrder = { name: string; secret: string; victims: Record<Backend, number[]>; windowMs: number; tailMs: number };

export type PhaseOutcome = {
  name: string;
  /** Per backend: each victim's time from its deadline to its missed_renewal webhook (ms); missing ones left out. */
  latencies: Record<Backend, number[]>;
  missing: Record<Backend, number>;
  /** Each victim heard of: its deadline and the receipt (epoch ms), for the collector's side to split. */
  victims: { backend: Backend; leaseId: string; deadline: number; received: number }[];
  /** Webhooks other than a victim's first missed_renewal, by "event rule" (a repeat, another rule, another lease). */
  others: Record<string, number>;
  unverified: number;
  /** Renewals made while the phase ran, per second (the victims' last renewals not counted). */
  renewalsPerSecond: number;
  /** How long a victim's last renewal took to be answered (ms), per backend: the deadline's own uncertainty. */
  lastRenewalRttMs: Record<Backend, number>;
  durationMs: number;
};

export type ToLoad = { type: 'setup'; setup: LoadSetup } | { type: 'etcd'; ids: string[] } | { type: 'secret'; secret: string } | { type: 'phase'; phase: PhaseOrder } | { type: 'revive' };
export type FromLoad = { type: 'ready'; receiverUrl: string } | { type: 'phase-done'; outcome: PhaseOutcome } | { type: 'revived' };

const TICK_MS = 100;
const send = (message: FromLoad) => process.send?.(message);

let setup: LoadSetup | null = null;
/** The secret of the endpoint of the collector running now (told before it starts, so its first webhooks verify too). */
let secret: string | null = null;
const etcdIds: string[] = [];
const orders: ToLoad[] = [];
const live: Record<Backend, number[]> = { pg: [], redis: [], etcd: [] };
const cursor: Record<Backend, number> = { pg: 0, redis: 0, etcd: 0 };
const quota: Record<Backend, number> = { pg: 0, redis: 0, etcd: 0 };
process.on('message', (message: ToLoad) => {
  if (message.type === 'setup') setup = message.setup;
  else if (message.type === 'etcd') {
    for (const id of message.ids) {
      live.etcd.push(etcdIds.length);
      etcdIds.push(id);
    }
  } else if (message.type === 'secret') secret = message.secret;
  else orders.push(message);
});
process.on('SIGTERM', () => process.exit(0));
process.on('disconnect', () => process.exit(0));

while (!setup) await new Promise((resolve) => setTimeout(resolve, 20));
const config: LoadSetup = setup;
const sql = new pg.Client(config.sourceDbUrl);
await sql.connect();
const victimSql = new pg.Client(config.sourceDbUrl);
await victimSql.connect();
const redis = new Redis(config.redisUrl);
const etcd = new Etcd3({ hosts: config.etcdEndpoints });
const keepalive = await etcd.leaseClient.leaseKeepAlive();
/** Keepalives awaited by a victim's last renewal: lease id -> resolve. */
const awaitedKeepalives = new Map<string, () => void>();
keepalive.on('data', (response: { ID: string }) => {
  const resolve = awaitedKeepalives.get(String(response.ID));
  if (resolve) {
    awaitedKeepalives.delete(String(response.ID));
    resolve();
  }
});
keepalive.on('error', () => {});
live.pg = Array.from({ length: config.counts.pg }, (_, i) => i);
live.redis = Array.from({ length: config.counts.redis }, (_, i) => i);

const receiver = await startReceiver(() => secret);
send({ type: 'ready', receiverUrl: receiver.url });

const total = BACKENDS.reduce((sum, b) => sum + config.counts[b], 0);
const rate = Object.fromEntries(BACKENDS.map((b) => [b, (config.renewalsPerSecond * config.counts[b]) / total])) as Record<Backend, number>;
const ttlS = Math.round(config.ttlMs / 1000);
const leaseId = (b: Backend, i: number) => (b === 'pg' ? `pg/leases/job-${i + 1}` : b === 'redis' ? `redis/${config.redisPrefix}${i}` : `etcd/${config.etcdPrefix}${i}`);
const FINAL_PEXPIRE = `redis.call('PEXPIRE', KEYS[1], ARGV[1]); return redis.call('PEXPIRETIME', KEYS[1])`;

/** The victims of the phase running: due time (ms after its start), and once stopped, its deadline (epoch ms). */
type Victim = { backend: Backend; index: number; leaseId: string; dueMs: number; deadline: number | null; rttMs: number; received: number | null };
type Phase = { order: PhaseOrder; started: number; victims: Victim[]; byLease: Map<string, Victim>; next: number; renewed: number };
let phase = null as Phase | null;

/** The last renewal of a victim, alone; returns its deadline (epoch ms) and how long it took. */
async function lastRenewal(b: Backend, i: number): Promise<{ deadline: number; rttMs: number }> {
  const started = performance.now();
  if (b === 'pg') {
    const { rows } = await victimSql.query<{ at: number }>(
      `UPDATE leases SET expires_at = now() + $2 * interval '1 millisecond' WHERE name = $1 RETURNING extract(epoch FROM expires_at)::float8 * 1000 AS at`,
      [`job-${i + 1}`, config.ttlMs],
    );
    return { deadline: Number(rows[0]!.at), rttMs: performance.now() - started };
  }
  if (b === 'redis') {
    const at = (await redis.eval(FINAL_PEXPIRE, 1, `${config.redisPrefix}${i}`, config.ttlMs)) as number;
    return { deadline: Number(at), rttMs: performance.now() - started };
  }
  const id = etcdIds[i]!;
  const answered = new Promise<void>((resolve) => awaitedKeepalives.set(id, resolve));
  const sentWall = Date.now();
  keepalive.write({ ID: id });
  await answered;
  // The leader sets the new expiry when it handles the keepalive, after it was sent: the time
  // of sending + the TTL is the earliest the deadline can be (latencies are never understated).
  return { deadline: sentWall + config.ttlMs, rttMs: performance.now() - started };
}

function take(b: Backend, n: number): number[] {
  const list = live[b];
  const picked: number[] = [];
  for (let k = 0; k < n && list.length > 0; k++) {
    if (cursor[b] >= list.length) cursor[b] = 0;
    picked.push(list[cursor[b]]!);
    cursor[b] += 1;
  }
  return picked;
}

function stopRenewing(b: Backend, i: number) {
  const at = live[b].indexOf(i);
  if (at < 0) return;
  live[b].splice(at, 1);
  if (at < cursor[b]) cursor[b] -= 1;
}

async function renewTick(elapsedMs: number) {
  const picks = {} as Record<Backend, number[]>;
  for (const b of BACKENDS) {
    // At most two seconds' worth at once after a stall.
    quota[b] = Math.min(quota[b] + (rate[b] * elapsedMs) / 1000, 2 * rate[b]);
    const n = Math.min(live[b].length, Math.floor(quota[b]));
    quota[b] -= n;
    picks[b] = take(b, n);
  }
  const work: Promise<unknown>[] = [];
  if (picks.pg.length) work.push(sql.query(`UPDATE leases SET expires_at = now() + $2 * interval '1 millisecond' WHERE name = ANY($1)`, [picks.pg.map((i) => `job-${i + 1}`), config.ttlMs]));
  if (picks.redis.length) {
    const pipeline = redis.pipeline();
    for (const i of picks.redis) pipeline.pexpire(`${config.redisPrefix}${i}`, config.ttlMs);
    work.push(pipeline.exec());
  }
  for (const i of picks.etcd) keepalive.write({ ID: etcdIds[i]! });
  await Promise.all(work);
  const n = picks.pg.length + picks.redis.length + picks.etcd.length;
  if (phase) phase.renewed += n;
}

/** Victims due now stop being renewed, each after a last renewal of its own (before this tick's batch, so none is renewed after it). */
async function stopDueVictims() {
  if (!phase) return;
  const now = performance.now() - phase.started;
  const due: Victim[] = [];
  while (phase.next < phase.victims.length && phase.victims[phase.next]!.dueMs <= now) due.push(phase.victims[phase.next++]!);
  for (const victim of due) stopRenewing(victim.backend, victim.index);
  await Promise.all(
    due.map(async (victim) => {
      const { deadline, rttMs } = await lastRenewal(victim.backend, victim.index);
      victim.deadline = deadline;
      victim.rttMs = rttMs;
    }),
  );
}

function startPhase(order: PhaseOrder) {
  secret = order.secret;
  const victims: Victim[] = [];
  BACKENDS.forEach((b, k) => {
    const list = order.victims[b];
    const spacing = order.windowMs / Math.max(1, list.length);
    list.forEach((index, j) => victims.push({ backend: b, index, leaseId: leaseId(b, index), dueMs: (j + k / BACKENDS.length) * spacing, deadline: null, rttMs: 0, received: null }));
  });
  victims.sort((a, b) => a.dueMs - b.dueMs);
  phase = { order, started: performance.now(), victims, byLease: new Map(victims.map((v) => [v.leaseId, v])), next: 0, renewed: 0 };
}

/** Matches what the receiver got; returns true when the phase is over (every victim heard of, or the tail has passed). */
function checkPhase(): boolean {
  if (!phase) return false;
  const path = `/hook/${phase.order.name}`;
  for (const r of receiver.received) {
    if (r.path !== path) continue;
    const body = r.body as AlertMessage;
    const victim = body?.type === 'alert.firing' && body.alert.rule.type === 'missed_renewal' ? phase.byLease.get(body.alert.leaseId ?? '') : undefined;
    if (victim && victim.received === null && victim.deadline !== null) victim.received = r.at;
  }
  if (phase.next < phase.victims.length || phase.victims.some((v) => v.deadline === null)) return false;
  const lastDeadline = Math.max(...phase.victims.map((v) => v.deadline!));
  return phase.victims.every((v) => v.received !== null) || Date.now() > lastDeadline + phase.order.tailMs;
}

function finishPhase(): PhaseOutcome {
  const p = phase!;
  const path = `/hook/${p.order.name}`;
  const mine = receiver.received.filter((r) => r.path === path);
  const others: Record<string, number> = {};
  const firstOf = new Set<string>();
  for (const r of mine) {
    const body = r.body as AlertMessage;
    const id = body?.alert?.leaseId ?? '';
    const victim = p.byLease.get(id);
    if (victim && body.type === 'alert.firing' && body.alert.rule.type === 'missed_renewal' && !firstOf.has(id)) {
      firstOf.add(id);
      continue;
    }
    const what = `${body?.type ?? '?'} ${body?.alert?.rule?.type ?? '?'} on ${body?.alert?.source ?? '?'}${victim ? '' : ' (not a victim)'}`;
    others[what] = (others[what] ?? 0) + 1;
  }
  const durationMs = performance.now() - p.started;
  const outcome: PhaseOutcome = {
    name: p.order.name,
    latencies: { pg: [], redis: [], etcd: [] },
    missing: { pg: 0, redis: 0, etcd: 0 },
    victims: p.victims.filter((v) => v.received !== null).map((v) => ({ backend: v.backend, leaseId: v.leaseId, deadline: v.deadline!, received: v.received! })),
    others,
    unverified: mine.filter((r) => !r.verified).length,
    renewalsPerSecond: p.renewed / (durationMs / 1000),
    lastRenewalRttMs: { pg: 0, redis: 0, etcd: 0 },
    durationMs,
  };
  for (const v of p.victims) {
    if (v.received === null) outcome.missing[v.backend] += 1;
    else outcome.latencies[v.backend].push(v.received - v.deadline!);
    outcome.lastRenewalRttMs[v.backend] = Math.max(outcome.lastRenewalRttMs[v.backend], v.rttMs);
  }
  receiver.received.length = 0;
  phase = null;
  secret = null;
  return outcome;
}

/** A new grant for every victim of the last phase, and they are renewed again. */
async function revive(victims: Victim[]) {
  for (const v of victims) {
    if (v.backend === 'pg') await sql.query(`UPDATE leases SET expires_at = now() + $2 * interval '1 millisecond' WHERE name = $1`, [`job-${v.index + 1}`, config.ttlMs]);
    else if (v.backend === 'redis') await redis.set(`${config.redisPrefix}${v.index}`, `worker-${v.index % 89}`, 'PX', config.ttlMs);
    else {
      const { ID } = await etcd.leaseClient.leaseGrant({ TTL: ttlS });
      await etcd.kv.put({ key: Buffer.from(`${config.etcdPrefix}${v.index}`), value: Buffer.from(`worker-${v.index % 83}`), lease: ID });
      etcdIds[v.index] = ID;
    }
    if (!live[v.backend].includes(v.index)) live[v.backend].push(v.index);
  }
}

let lastVictims: Victim[] = [];
let last = performance.now();
for (;;) {
  const started = performance.now();
  const order = orders.shift();
  if (order?.type === 'phase') startPhase(order.phase);
  else if (order?.type === 'revive') {
    await revive(lastVictims);
    lastVictims = [];
    send({ type: 'revived' });
  }
  await stopDueVictims();
  await renewTick(started - last);
  last = started;
  const current = phase;
  if (current && checkPhase()) {
    lastVictims = current.victims;
    send({ type: 'phase-done', outcome: finishPhase() });
  }
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, TICK_MS - (performance.now() - started))));
}
