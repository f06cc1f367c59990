// The alert outbox across processes, on a real PostgreSQL store (a fresh database per test):
// `leasehold collect` runs as its own OS process, as in production; lease holders are their own
// processes, stopped with SIGSTOP; the receiver is a real HTTP server on 127.0.0.1 that verifies
// every request with the standardwebhooks package. While it holds a request, the receiver reads
// the delivery's row: the claim names the worker sending it, and a worker's id names its pid,
// so every attempt is attributed to the process that made it.
//
//  1. A collector killed (SIGKILL) between two attempts of a delivery (the first answered 500
//     with Retry-After): the row survives, a second process delivers it, one 2xx answer in all,
//     under the same webhook-id.
//  2. Two collectors on one store, both running delivery workers, many pending deliveries and a
//     slow receiver: every webhook-id arrives exactly once, each row was claimed once, and both
//     processes sent some. The rows are locked by the test when they fall due, so that both
//     workers try to claim them at once (a claim that waited for the lock would double-send).
//  3. A silence ends with two collectors on the store: each sweep would release what it held;
//     one sweep is held mid-transaction until the other has swept, and each alert is still
//     delivered once.
//  4. The real Alertmanager as an `alertmanager` endpoint: a stopped holder's missed_renewal is
//     listed as active; after another holder takes over, its resolution takes it off the list.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generateWebhookSecret } from '../../lib/alerts/deliver/secret';
import { applyAlertWrites, type AlertWrite } from '../../lib/db/alerts';
import { createSilence, endSilence } from '../../lib/db/silences';
import { openStore, type Store } from '../../lib/db/store';
import { createWebhook } from '../../lib/db/webhooks';
import type { AlertMessage } from '../../lib/domain/alert-types';
import { forkHolder, type HolderOptions } from '../support/holder-process';
import { createPostgresDatabase, type TestDatabase } from '../support/databases';
import { ROOT, testServices } from '../support/services';

const services = testServices();
const SOURCE = 'outbox';
const unique = () => randomBytes(3).toString('hex');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const scratch = mkdtempSync(path.join(os.tmpdir(), 'leasehold-outbox-'));

let db: TestDatabase & { url: string };
let store: Store;
const children: ChildProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];

beforeEach(async () => {
  db = await createPostgresDatabase('lh_outbox');
  store = await openStore({ kind: 'postgres', url: db.url });
});
afterEach(async () => {
  await Promise.all(
    children.splice(0).map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGCONT');
      child.kill('SIGKILL');
      await exited;
    }),
  );
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
  await store.close();
  await db.drop();
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// ------------------------------------------------------------------ processes

type Collect = { child: ChildProcess; pid: number; output: () => string; exited: Promise<unknown> };

/** A config file: one Redis source on this run's key prefix, alerts on, loopback receivers allowed. */
function configFile(prefix: string): string {
  const file = path.join(scratch, `${unique()}.json`);
  const config = {
    sources: [{ name: SOURCE, backend: 'redis', urls: [services.redisUrl], match: [`${prefix}*`] }],
    pollMs: 250,
    alerts: { allowCidrs: ['127.0.0.1/32'] },
  };
  writeFileSync(file, JSON.stringify(config));
  return file;
}

/** `leasehold collect` as its own process on the test store. */
function collect(config: string): Collect {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/leasehold.ts', 'collect'], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: db.url, LEASEHOLD_CONFIG: config, LEASEHOLD_COLLECTOR_LEASE_TTL_MS: '3000' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return { child, pid: child.pid!, output: () => output, exited };
}

/** Resolves when the process's collector (and with it its delivery worker) has started. */
async function started(collector: Collect) {
  await expect.poll(() => collector.output(), { timeout: 30_000 }).toMatch(/started for 1 source/);
}

/** The pid in a collector's id (`host:pid:random`), which is the worker id a claim names. */
const pidOf = (workerId: string | null) => (workerId === null ? null : Number(workerId.split(':').at(-2)));

const holder = (key: string, name: string, options: HolderOptions) => forkHolder(children, { backend: 'redis', urls: [services.redisUrl] }, key, name, options);

const leaseState = async (leaseId: string) => (await store.prisma.lease.findUnique({ where: { id: leaseId } }))?.state;

// ------------------------------------------------------------------ the receiver

type Hit = {
  id: string;
  verified: boolean;
  error: string | null;
  body: AlertMessage;
  /** The worker that held the delivery's claim while this request was in flight. */
  sender: string | null;
  /** The status this receiver answered. */
  answered: number;
};
type Answer = { status: number; headers?: Record<string, string>; delayMs?: number };

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

/** A receiver that verifies each request against `secret`, records who sent it, and answers as `answer` says. */
async function receiver(secret: () => string, answer: (n: number) => Answer) {
  const hits: Hit[] = [];
  let requests = 0;
  const server = createServer(async (request, response) => {
    const n = requests++;
    const raw = await readBody(request);
    const headers = { 'webhook-id': String(request.headers['webhook-id'] ?? ''), 'webhook-timestamp': String(request.headers['webhook-timestamp'] ?? ''), 'webhook-signature': String(request.headers['webhook-signature'] ?? '') };
    let verified = false;
    let error: string | null = null;
    try {
      new Webhook(secret()).verify(raw, headers);
      verified = true;
    } catch (e) {
      error = (e as Error).message;
    }
    // The claim is written (and committed) before the request is sent, and released only after the answer.
    const row = await store.prisma.webhookDelivery.findUnique({ where: { messageId: headers['webhook-id'] }, select: { claimedBy: true } }).catch(() => null);
    const { status, headers: extra, delayMs } = answer(n);
    if (delayMs) await sleep(delayMs);
    hits.push({ id: headers['webhook-id'], verified, error, body: JSON.parse(raw) as AlertMessage, sender: row?.claimedBy ?? null, answered: status });
    response.writeHead(status, { 'content-type': 'text/plain', ...extra }).end(status < 300 ? 'ok' : 'not now');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  server.on('connection', (socket) => cleanups.push(async () => void socket.destroy()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, hits };
}

async function endpoint(url: string, format: string, rules: string[], secret = generateWebhookSecret()) {
  const hook = await createWebhook(store, { name: `outbox-${unique()}`, url, format, secret, routingKey: null, rules });
  return { ...hook, secret };
}

const deliveryRow = (messageId: string) =>
  store.prisma.webhookDelivery.findUnique({ where: { messageId }, select: { status: true, attempts: true, claimedBy: true, lastStatusCode: true, nextAttemptAt: true, event: true, alertId: true } });

/** `n` raise writes for as many leases of a source no collector observes: their deliveries are all the workers do with them. */
async function bulkWrites(n: number, source: string): Promise<AlertWrite[]> {
  const rule = await store.prisma.alertRule.findFirstOrThrow({ where: { type: 'missed_renewal' } });
  return Array.from({ length: n }, (_, i) => ({
    op: 'raise',
    fingerprint: `${source}-${i}`,
    rule: { id: rule.id, name: rule.name, type: 'missed_renewal' },
    severity: 'critical',
    source,
    leaseId: `${source}/job-${i}`,
    leaseKey: `job-${i}`,
    summary: `job-${i} missed its renewal`,
    facts: { holder: null, previousHolder: `worker-${i}`, token: null, previousToken: null, ttlMs: 1_000, marginMs: null, gapMs: null, detail: null },
    resolveAfterMs: null,
  }));
}

/** Statements of the test database writing the outbox and waiting for a lock. */
const outboxWritesWaiting = async () =>
  (await store.withSql((sql) => sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO "WebhookDelivery"%'`)))[0]!.n;

// ------------------------------------------------------------------ the tests

describe('the outbox across `leasehold collect` processes', () => {
  it('a collector killed between two attempts: the row survives, and another process delivers it once, under the same webhook-id', async () => {
    const prefix = `ob${unique()}:`;
    const key = `${prefix}job`;
    const leaseId = `${SOURCE}/${key}`;
    let secret = '';
    // The first attempt is refused with Retry-After: 5, a floor under the retry's delay, so the
    // delivery sits between attempts (its failure recorded, its claim released) for 5 s.
    const hook = await receiver(() => secret, (n) => (n === 0 ? { status: 500, headers: { 'retry-after': '5' } } : { status: 200 }));
    ({ secret } = await endpoint(hook.url, 'native', ['missed_renewal']));
    const config = configFile(prefix);
    const one = collect(config);
    const stopped = holder(key, 'stopped', { ttlMs: 1_000, renewEveryMs: 200 });
    await stopped.held;
    await expect.poll(() => leaseState(leaseId), { timeout: 30_000 }).toBe('held');
    stopped.child.kill('SIGSTOP');

    await expect.poll(() => hook.hits.length, { timeout: 20_000 }).toBeGreaterThanOrEqual(1);
    const first = hook.hits[0]!;
    expect(first).toMatchObject({ answered: 500, verified: true });
    expect(first.body).toMatchObject({ type: 'alert.firing', alert: { rule: { type: 'missed_renewal' }, leaseId } });
    expect(pidOf(first.sender)).toBe(one.pid);
    // Between attempts: the failure is recorded and the claim released; then the process dies.
    await expect.poll(() => deliveryRow(first.id), { timeout: 10_000 }).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: 500, claimedBy: null });
    one.child.kill('SIGKILL');
    await one.exited;
    expect(hook.hits).toHaveLength(1);
    // Nothing is lost: the row outlived its process, waiting for any worker.
    expect(await deliveryRow(first.id)).toMatchObject({ status: 'pending', attempts: 1, claimedBy: null, event: 'alert.firing' });

    const two = collect(config);
    await expect.poll(async () => (await deliveryRow(first.id))?.status, { timeout: 30_000 }).toBe('delivered');
    // The second process observes the source now (the first one's ownership lease ran out).
    await expect.poll(async () => pidOf((await store.prisma.source.findUnique({ where: { name: SOURCE } }))?.collectorId ?? null), { timeout: 20_000 }).toBe(two.pid);
    // A worker looks every second: a duplicate would come within that.
    await sleep(2_000);
    const attempts = hook.hits.filter((h) => h.body.type === 'alert.firing' && h.body.alert.rule.type === 'missed_renewal' && h.body.alert.leaseId === leaseId);
    expect(attempts.map((h) => h.id)).toEqual([first.id, first.id]);
    expect(attempts.map((h) => h.answered)).toEqual([500, 200]);
    expect(attempts.every((h) => h.verified), JSON.stringify(attempts.map((h) => h.error))).toBe(true);
    expect(attempts.map((h) => pidOf(h.sender))).toEqual([one.pid, two.pid]);
    expect(hook.hits.filter((h) => h.id === first.id && h.answered < 300)).toHaveLength(1);
    const row = (await deliveryRow(first.id))!;
    expect(row).toMatchObject({ status: 'delivered', attempts: 2, lastStatusCode: 200, claimedBy: null });
    // One alert, one firing delivery: the second process took the open alert over and did not raise it again.
    const alerts = await store.prisma.alert.findMany({ where: { leaseId, ruleType: 'missed_renewal' } });
    expect(alerts).toHaveLength(1);
    expect(await store.prisma.webhookDelivery.count({ where: { alertId: alerts[0]!.id, event: 'alert.firing' } })).toBe(1);
  }, 90_000);

  it('two collectors on one store: both workers deliver, and every webhook-id arrives exactly once', async () => {
    const N = 96;
    let secret = '';
    // Slow enough that one worker alone (16 at a time) would need more than the other's 1 s look.
    const hook = await receiver(() => secret, () => ({ status: 200, delayMs: 400 }));
    const made = await endpoint(hook.url, 'native', []);
    secret = made.secret;
    const config = configFile(`ob${unique()}:`);
    const a = collect(config);
    const b = collect(config);
    await Promise.all([started(a), started(b)]);
    // Only one of them observes the source (ownership leases); both run a delivery worker.
    await expect.poll(async () => pidOf((await store.prisma.source.findUnique({ where: { name: SOURCE } }))?.collectorId ?? null), { timeout: 20_000 }).toBeOneOf([a.pid, b.pid]);

    // The deliveries are queued due in 3 s, and locked by another session before they are due:
    // when they fall due, both workers look while the rows are locked. A claim must pass over
    // a locked row (SKIP LOCKED), not wait for it and then take it with the other worker.
    const gate = await db.connect();
    cleanups.push(() => gate.close());
    const applied = await applyAlertWrites(store, await bulkWrites(N, `bulk-${unique()}`), { linkOf: () => null, nowWall: Date.now() + 3_000 });
    expect(applied).toMatchObject({ queued: N, repeated: 0 });
    expect(applied.fired).toHaveLength(N);
    await gate.exec('BEGIN');
    expect(await gate.query(`SELECT id FROM "WebhookDelivery" WHERE "webhookId" = $1 AND "attempts" = 0 AND "nextAttemptAt" > now() FOR UPDATE`, [made.id])).toHaveLength(N);
    await expect.poll(async () => (await store.withSql((sql) => sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM "WebhookDelivery" WHERE "nextAttemptAt" <= now()`)))[0]!.n, { timeout: 10_000 }).toBe(N);
    await sleep(2_000);
    expect(hook.hits).toHaveLength(0);
    await gate.exec('COMMIT');
    const queued = (await store.prisma.webhookDelivery.findMany({ where: { webhookId: made.id }, select: { messageId: true } })).map((d) => d.messageId);
    expect(queued).toHaveLength(N);

    await expect.poll(() => store.prisma.webhookDelivery.count({ where: { webhookId: made.id, status: 'delivered' } }), { timeout: 60_000 }).toBe(N);
    await sleep(2_000);
    const perId = new Map<string, number>();
    for (const hit of hook.hits) perId.set(hit.id, (perId.get(hit.id) ?? 0) + 1);
    expect([...perId.keys()].sort()).toEqual([...queued].sort());
    expect([...perId.values()].filter((count) => count !== 1)).toEqual([]);
    expect(hook.hits.every((h) => h.verified), JSON.stringify(hook.hits.map((h) => h.error).filter(Boolean))).toBe(true);
    // Each row was claimed once (a claim counts an attempt).
    const rows = await store.prisma.webhookDelivery.findMany({ where: { webhookId: made.id } });
    expect(rows.filter((r) => r.attempts !== 1 || r.status !== 'delivered' || r.claimedBy !== null)).toEqual([]);
    // Both processes' workers sent some: the sender of each request is the claim it was sent under.
    const bySender = new Map<number | null, number>();
    for (const hit of hook.hits) bySender.set(pidOf(hit.sender), (bySender.get(pidOf(hit.sender)) ?? 0) + 1);
    expect([...bySender.keys()].sort(), JSON.stringify([...bySender])).toEqual([a.pid, b.pid].sort());
    expect(bySender.get(a.pid)! + bySender.get(b.pid)!).toBe(N);
  }, 90_000);

  it('a silence ends with two collectors on the store: each alert it held is delivered once', async () => {
    const M = 8;
    let secret = '';
    const hook = await receiver(() => secret, () => ({ status: 200 }));
    const made = await endpoint(hook.url, 'native', []);
    secret = made.secret;
    const source = `bulk-${unique()}`;
    const silence = await createSilence(store, { scope: { kind: 'source', source }, ruleType: 'missed_renewal', startsAt: new Date(Date.now() - 1_000), endsAt: new Date(Date.now() + 3_600_000), reason: 'outbox test', author: 'test' });
    const applied = await applyAlertWrites(store, await bulkWrites(M, source), { linkOf: () => null });
    expect(applied).toMatchObject({ queued: 0 });
    expect(applied.fired.map((a) => a.id)).toHaveLength(M);
    const config = configFile(`ob${unique()}:`);
    const a = collect(config);
    const b = collect(config);
    await Promise.all([started(a), started(b)]);

    // Every worker sweeps each second; when the silence ends, the first sweep to see it takes the
    // held alerts and queues their deliveries, and is held there (the rows' foreign key waits for
    // this lock on the endpoint) until the other worker has swept too. The other must not queue them again.
    const gate = await db.connect();
    cleanups.push(() => gate.close());
    await gate.exec('BEGIN');
    await gate.query(`SELECT id FROM "Webhook" WHERE id = $1 FOR UPDATE`, [made.id]);
    await endSilence(store, silence.id);
    await expect.poll(outboxWritesWaiting, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    await sleep(2_000);
    await gate.exec('COMMIT');

    await expect.poll(() => store.prisma.webhookDelivery.count({ where: { webhookId: made.id, status: 'delivered' } }), { timeout: 20_000 }).toBeGreaterThanOrEqual(M);
    await sleep(2_000);
    const rows = await store.prisma.webhookDelivery.findMany({ where: { webhookId: made.id }, select: { alertId: true, event: true, status: true } });
    expect(rows.map((r) => `${r.alertId} ${r.event} ${r.status}`).sort()).toEqual(applied.fired.map((f) => `${f.id} alert.firing delivered`).sort());
    const perAlert = new Map<string, number>();
    for (const hit of hook.hits) perAlert.set(hit.body.alert.id, (perAlert.get(hit.body.alert.id) ?? 0) + 1);
    expect(Object.fromEntries(perAlert)).toEqual(Object.fromEntries(applied.fired.map((f) => [f.id, 1])));
    expect(hook.hits.every((h) => h.verified && h.body.type === 'alert.firing')).toBe(true);
  }, 90_000);
});

// The test Alertmanager (scripts/services.sh starts it on 127.0.0.1:19093, routing to no receiver).
describe.skipIf(!services.alertmanagerUrl)('the real Alertmanager as an endpoint', () => {
  const base = (services.alertmanagerUrl ?? '').replace(/\/+$/, '');
  type GettableAlert = { labels: Record<string, string>; annotations: Record<string, string>; startsAt: string; endsAt: string; status: { state: string } };
  async function alertsOf(lease: string): Promise<GettableAlert[]> {
    const filter = encodeURIComponent(`lease="${lease}"`);
    const response = await fetch(`${base}/api/v2/alerts?filter=${filter}`);
    expect(response.status).toBe(200);
    return (await response.json()) as GettableAlert[];
  }
  const names = async (lease: string) => (await alertsOf(lease)).map((a) => a.labels.alertname).sort();

  it('a stopped holder’s missed_renewal is listed active, and its resolution ends it when another holder takes over', async () => {
    expect(new URL(base).hostname).toMatch(/^127\./);
    const prefix = `obam${unique()}:`;
    const key = `${prefix}job`;
    const leaseId = `${SOURCE}/${key}`;
    // Whatever this test leaves firing in Alertmanager is ended when it finishes.
    cleanups.push(async () => {
      const left = await alertsOf(key);
      if (left.length === 0) return;
      const now = new Date().toISOString();
      await fetch(`${base}/api/v2/alerts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(left.map((a) => ({ labels: a.labels, annotations: a.annotations, startsAt: a.startsAt, endsAt: now }))),
      });
    });
    const made = await endpoint(base, 'alertmanager', []);
    collect(configFile(prefix));
    const first = holder(key, 'first', { ttlMs: 2_000, renewEveryMs: 400 });
    const a = await first.held;
    await expect.poll(() => leaseState(leaseId), { timeout: 30_000 }).toBe('held');
    expect(await alertsOf(key)).toEqual([]);
    first.child.kill('SIGSTOP');

    await expect.poll(() => names(key), { timeout: 20_000 }).toContain('missed_renewal');
    const missed = (await alertsOf(key)).find((x) => x.labels.alertname === 'missed_renewal')!;
    expect(missed.status.state).toBe('active');
    expect(missed.labels).toMatchObject({ source: SOURCE, lease: key, severity: 'critical' });
    expect(missed.annotations).toMatchObject({ previous_holder: a.holder, lease_id: leaseId });
    expect(Date.parse(missed.endsAt)).toBeGreaterThan(Date.now());

    // Another holder takes the lease over: the missed renewal is over, and Alertmanager is told.
    const second = holder(key, 'second', { ttlMs: 5_000, renewEveryMs: 1_000 });
    const b = await second.held;
    await expect.poll(() => names(key), { timeout: 20_000 }).toEqual(['failover']);
    const [failover] = await alertsOf(key);
    expect(failover!.annotations).toMatchObject({ holder: b.holder, previous_holder: a.holder });
    const fingerprint = missed.labels.leasehold_fingerprint!;
    const resolved = await store.prisma.webhookDelivery.findMany({ where: { webhookId: made.id, event: 'alert.resolved' } });
    expect(resolved.filter((d) => (d.payload as AlertMessage).alert.fingerprint === fingerprint)).toMatchObject([{ status: 'delivered', lastStatusCode: 200 }]);
  }, 90_000);
});
