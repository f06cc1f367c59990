// Alerts end to end on real servers: a holder process stopped with SIGSTOP past its TTL, on
// each backend, is confirmed missed by the deadline timer's targeted read (polls are slow here
// on purpose), and a real HTTP receiver gets, signed (verified with the standardwebhooks
// package), exactly one missed_renewal, a failover when another takes over, and the
// missed_renewal's resolution. Deliveries are retried under the same webhook-id; silences hold
// them back and let them go when they end.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SourceConfig } from '../../lib/config';
import type { Collector } from '../../lib/collector';
import { generateWebhookSecret } from '../../lib/alerts/deliver/secret';
import { createSilence, endSilence } from '../../lib/db/silences';
import { createWebhook, deleteWebhook } from '../../lib/db/webhooks';
import { listDeliveries } from '../../lib/db/deliveries';
import { openStore, type Store } from '../../lib/db/store';
import type { AlertMessage } from '../../lib/domain/alert-types';
import type { LeaseClientOptions } from '../../lib/lease';
import { createLogger, type Logger } from '../../lib/log';
import { testCollector } from '../support/collector';
import { forkHolder, type HolderOptions } from '../support/holder-process';
import { createPostgresDatabase, type TestDatabase } from '../support/databases';
import { testServices } from '../support/services';
import { startReceiver, type Receiver } from '../support/webhook-receiver';

const services = testServices();
const unique = () => randomBytes(3).toString('hex');

let db: TestDatabase & { url: string };
let store: Store;
let receiver: Receiver;
let secret: string | null = null;
let webhookId: string | null = null;
const children: ChildProcess[] = [];
const collectors: Collector[] = [];

beforeAll(async () => {
  db = await createPostgresDatabase('lh_alerts');
  store = await openStore({ kind: 'postgres', url: db.url });
  receiver = await startReceiver(() => secret);
});
afterEach(async () => {
  for (const child of children.splice(0)) {
    child.kill('SIGCONT');
    child.kill('SIGKILL');
  }
  await Promise.all(collectors.splice(0).map((c) => c.stop()));
  if (webhookId) await deleteWebhook(store, webhookId);
  webhookId = null;
  receiver.received.length = 0;
});
afterAll(async () => {
  await receiver.close();
  await store.close();
  await db.drop();
});

async function endpoint(rules: string[] = []) {
  secret = generateWebhookSecret();
  const hook = await createWebhook(store, { name: `test-${unique()}`, url: receiver.url, format: 'native', secret, routingKey: null, rules });
  webhookId = hook.id;
  return hook;
}

function collect(sources: SourceConfig[], pollMs = 5_000, logger?: Logger): Collector {
  const collector = testCollector(store, sources, { pollMs, alerts: { allowCidrs: ['127.0.0.1/32'] }, logger });
  collectors.push(collector);
  return collector;
}

const holder = (lease: LeaseClientOptions, key: string, name: string, options: HolderOptions) => forkHolder(children, lease, key, name, options);

const messages = () => receiver.received.map((r) => r.body as AlertMessage);
const seen = (leaseId: string) => messages().filter((m) => m.alert.leaseId === leaseId).map((m) => `${m.type} ${m.alert.rule.type}`);

type Case = { name: string; lease: () => LeaseClientOptions; source: (prefix: string) => SourceConfig; key: (prefix: string) => string; leaseId: (key: string) => string; leaseKey?: (key: string) => string };

const CASES: Case[] = [
  {
    name: 'postgres lease table (polled every 5 s)',
    lease: () => ({ backend: 'postgres', url: db.url, table: 'alert_leases' }),
    source: () => ({ name: 'pg', backend: 'postgres', url: db.url, tables: [{ table: 'alert_leases', format: 'leasehold' }], advisoryLocks: false }),
    key: (prefix) => `${prefix}digest`,
    leaseId: (key) => `pg/alert_leases/${key}`,
    leaseKey: (key) => `alert_leases/${key}`,
  },
  {
    name: 'redis SET NX PX with a fence counter',
    lease: () => ({ backend: 'redis', urls: [services.redisUrl] }),
    source: (prefix) => ({ name: 'redis', backend: 'redis', urls: [services.redisUrl], match: [`${prefix}*`], fenceSuffix: ':fence', keyspaceNotifications: 'auto' }) as SourceConfig,
    key: (prefix) => `${prefix}digest`,
    leaseId: (key) => `redis/${key}`,
  },
  {
    name: 'etcd lock',
    lease: () => ({ backend: 'etcd', endpoints: services.etcdEndpoints }),
    source: (prefix) => ({ name: 'etcd', backend: 'etcd', endpoints: services.etcdEndpoints, prefixes: [prefix] }) as SourceConfig,
    key: (prefix) => `${prefix}digest`,
    leaseId: (key) => `etcd/${key}`,
  },
];

describe('alerts on real backends', () => {
  it.each(CASES)('$name: a holder stopped past its TTL: one missed_renewal, a failover, then resolved, each signed', async (c) => {
    const prefix = `al${unique()}${c.name.startsWith('etcd') ? '/' : ':'}`;
    const key = c.key(prefix);
    const leaseId = c.leaseId(key);
    await endpoint();
    let logged = '';
    collect([c.source(prefix)], 5_000, createLogger({ destination: { write: (chunk: string) => void (logged += chunk) } }));
    const first = holder(c.lease(), key, 'first', { ttlMs: 2_000, renewEveryMs: 400 });
    const a = await first.held;
    await expect.poll(async () => (await store.prisma.lease.findUnique({ where: { id: leaseId } }))?.holder, { timeout: 15_000 }).toBe(a.holder);
    const second = holder(c.lease(), key, 'second', { ttlMs: 2_000, renewEveryMs: 400 });
    first.child.kill('SIGSTOP');
    const b = await second.held;
    await expect.poll(() => seen(leaseId), { timeout: 15_000 }).toEqual(expect.arrayContaining(['alert.firing missed_renewal', 'alert.firing failover', 'alert.resolved missed_renewal']));
    const mine = receiver.received.filter((r) => (r.body as AlertMessage).alert.leaseId === leaseId);
    expect(mine.every((r) => r.verified), JSON.stringify(mine.map((r) => r.error))).toBe(true);
    const missed = mine.filter((r) => (r.body as AlertMessage).type === 'alert.firing' && (r.body as AlertMessage).alert.rule.type === 'missed_renewal');
    expect(missed).toHaveLength(1);
    const firing = missed[0]!.body as AlertMessage;
    expect(firing.alert).toMatchObject({ previousHolder: a.holder, source: c.source(prefix).name, leaseKey: c.leaseKey?.(key) ?? key, status: 'firing', severity: 'critical' });
    const failover = messages().find((m) => m.alert.leaseId === leaseId && m.alert.rule.type === 'failover')!;
    expect(failover.alert).toMatchObject({ holder: b.holder, previousHolder: a.holder });
    const resolved = messages().find((m) => m.alert.leaseId === leaseId && m.type === 'alert.resolved' && m.alert.rule.type === 'missed_renewal')!;
    expect(resolved.alert.fingerprint).toBe(firing.alert.fingerprint);
    expect(resolved.alert.endsAt).not.toBeNull();
    // The engine logs through the logger its collector was handed, in its own area.
    const lines = logged.split('\n').filter(Boolean).map((line) => JSON.parse(line) as { area?: string; lease?: string; msg: string });
    expect(lines).toContainEqual(expect.objectContaining({ area: 'alerts', lease: leaseId, msg: expect.stringContaining('alert firing: missed_renewal') }));
    // Stored as the receiver saw it: one alert per firing, its deliveries delivered.
    // (The row is marked delivered just after the receiver answers: polled.)
    await expect.poll(async () => (await listDeliveries(store, { webhookId: webhookId! })).map((d) => d.status), { timeout: 5_000 }).not.toContain('pending');
    expect((await listDeliveries(store, { webhookId: webhookId! })).every((d) => d.status === 'delivered')).toBe(true);
  }, 60_000);

  it('a receiver answering 500 three times gets the delivery on the fourth try, under the same webhook-id', async () => {
    const prefix = `al${unique()}:`;
    const key = `${prefix}retry`;
    await endpoint(['missed_renewal']);
    receiver.failNext(500, 500, 500);
    collect([CASES[1]!.source(prefix)]);
    const only = holder(CASES[1]!.lease(), key, 'only', { ttlMs: 1_000, renewEveryMs: 200 });
    await only.held;
    await expect.poll(async () => (await store.prisma.lease.findUnique({ where: { id: `redis/${key}` } }))?.state, { timeout: 10_000 }).toBe('held');
    only.child.kill('SIGSTOP');
    await expect.poll(() => receiver.received.length, { timeout: 30_000 }).toBe(4);
    const ids = new Set(receiver.received.map((r) => r.id));
    expect(ids.size).toBe(1);
    expect(receiver.received.every((r) => r.verified)).toBe(true);
    await expect.poll(async () => (await listDeliveries(store, { webhookId: webhookId! }))[0]?.status, { timeout: 5_000 }).toBe('delivered');
    const [delivery] = await listDeliveries(store, { webhookId: webhookId! });
    expect(delivery).toMatchObject({ status: 'delivered', attempts: 4, lastStatusCode: 200 });
  }, 60_000);

  it('a silence holds deliveries back; when it ends, what still fires is delivered', async () => {
    const prefix = `al${unique()}:`;
    const key = `${prefix}quiet`;
    await endpoint(['missed_renewal']);
    const silence = await createSilence(store, { scope: { kind: 'source', source: 'redis' }, ruleType: 'missed_renewal', startsAt: new Date(Date.now() - 1000), endsAt: new Date(Date.now() + 3_600_000), reason: 'maintenance window (test)', author: 'test' });
    collect([CASES[1]!.source(prefix)]);
    const only = holder(CASES[1]!.lease(), key, 'only', { ttlMs: 1_000, renewEveryMs: 200 });
    await only.held;
    await expect.poll(async () => (await store.prisma.lease.findUnique({ where: { id: `redis/${key}` } }))?.state, { timeout: 10_000 }).toBe('held');
    only.child.kill('SIGSTOP');
    await expect.poll(async () => (await store.prisma.alert.findFirst({ where: { leaseId: `redis/${key}`, ruleType: 'missed_renewal' } }))?.silenced, { timeout: 10_000 }).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(receiver.received).toHaveLength(0);
    await endSilence(store, silence.id);
    await expect.poll(() => seen(`redis/${key}`), { timeout: 10_000 }).toEqual(['alert.firing missed_renewal']);
    expect(receiver.received[0]!.verified).toBe(true);
  }, 60_000);
});
