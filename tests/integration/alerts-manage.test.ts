// Managing alerts on a real store, as the API and the CLI do (lib/alerts/manage.ts), and what
// the delivery worker does with an endpoint's answers: hostile bodies refused with a sentence
// naming what was wrong; a private address refused when the endpoint is made and, behind a
// name, when the connection would be made (no packet leaves 127.0.0.0/8: the resolver is the
// test's); a rotated secret signs twice; 410 disables the endpoint; a dead delivery replays.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AlertsConfig } from '../../lib/config/alerts-schema';
import { createEgressAgent } from '../../lib/alerts/deliver/egress';
import { addRule, addSilence, addWebhook, changeRule, changeWebhook, newRuleBody, newSilenceBody, newWebhookBody, replayDeliveries, sendTestMessage, webhookChangeBody } from '../../lib/alerts/manage';
import { alertWrite } from '../../lib/alerts/engine';
import { alertLinker } from '../../lib/alerts/link';
import { DeliveryWorker } from '../../lib/alerts/worker';
import { silentLogger } from '../../lib/log';
import { applyAlertWrites, listAlerts } from '../../lib/db/alerts';
import { listDeliveries } from '../../lib/db/deliveries';
import { openStore, type Store } from '../../lib/db/store';
import { alertsPage } from '../../lib/queries/alerts';
import { deleteWebhook, getWebhook, listWebhooks } from '../../lib/db/webhooks';
import { AlertEvaluator, RULE_DEFAULTS } from '../../lib/domain/alert-rules';
import { TEST_ALERTS } from '../support/collector';
import { createPostgresDatabase, type TestDatabase } from '../support/databases';
import { startReceiver, type Receiver } from '../support/webhook-receiver';

let db: TestDatabase & { url: string };
let store: Store;
let receiver: Receiver;
let secret: string | null = null;
const config: AlertsConfig = { ...TEST_ALERTS, allowCidrs: ['127.0.0.1/32'] };

beforeAll(async () => {
  db = await createPostgresDatabase('lh_alerts_manage');
  store = await openStore({ kind: 'postgres', url: db.url });
  receiver = await startReceiver(() => secret);
});
afterEach(async () => {
  for (const webhook of await listWebhooks(store)) await deleteWebhook(store, webhook.id);
  receiver.received.length = 0;
});
afterAll(async () => {
  await receiver.close();
  await store.close();
  await db.drop();
});

const failure = (promise: Promise<unknown>) => promise.then(() => null, (error: Error & { status?: number; code?: string }) => error);

/** Raises one missed_renewal through the evaluator and the store, as the engine would. */
async function raiseMissed(leaseId: string) {
  const rule = { id: 'default-missed-renewal', name: 'Missed renewal', type: 'missed_renewal' as const, severity: 'critical' as const, scope: { kind: 'all' as const }, params: {}, enabled: true };
  const lease = { id: leaseId, source: 'pg', key: leaseId.slice(3), kind: 'lock' as const, state: 'expired' as const, stale: false, holder: null, lastHolder: 'a', token: null, lastToken: '7', ttlMs: 1000, candidates: 0 };
  const decisions = new AlertEvaluator([rule]).apply({ type: 'change', lease, change: { type: 'expired', holder: null, previousHolder: 'a', token: null, previousToken: '7', gapMs: null, detail: null } }, 0);
  return applyAlertWrites(store, decisions.map(alertWrite), { linkOf: alertLinker(undefined) });
}

function worker(lookupTo?: string) {
  return new DeliveryWorker({
    store,
    config,
    workerId: `test-${process.pid}`,
    linkOf: alertLinker(undefined),
    log: silentLogger(),
    retryBaseMs: 10,
    ...(lookupTo ? { dispatcher: createEgressAgent({ allowCidrs: config.allowCidrs, lookup: async () => [{ address: lookupTo, family: lookupTo.includes(':') ? 6 : 4 }] }) } : {}),
  });
}

describe('managing endpoints', () => {
  it.each([
    [{ name: 'x', url: 'ftp://example.com/hook' }, /https:\/\//],
    [{ name: 'x', url: 'not a url' }, /https:\/\//],
    [{ name: '', url: 'https://example.com' }, /letters, digits/],
    [{ name: 'x', url: 'https://example.com', format: 'teams' }, /native, slack, pagerduty/],
    [{ name: 'x', url: 'https://example.com', secret: 'hunter2' }, /whsec_/],
    [{ name: 'x', url: 'https://example.com', extra: 1 }, /extra|Unrecognized|unrecognized/],
  ])('refuses the body %j, naming what is wrong', (body, message) => {
    const parsed = newWebhookBody.safeParse(body);
    expect(parsed.success).toBe(false);
    expect(JSON.stringify(parsed.error!.issues)).toMatch(message);
  });

  it.each([
    ['http://10.1.2.3/hook', /private/],
    ['https://169.254.169.254/latest/meta-data', /link-local|169\.254/],
    ['http://127.0.0.2:9/hook', /loopback|allowCidrs/],
    ['https://[fd00::1]/hook', /unique-local|private|fd00/],
    ['http://[::ffff:10.0.0.1]/hook', /private|10\.0\.0\.1/],
  ])('refuses an endpoint at %s when it is made (422), with the reason', async (url, reason) => {
    const error = await failure(addWebhook(store, config, newWebhookBody.parse({ name: 'bad', url })));
    expect(error).toMatchObject({ status: 422, code: 'destination_refused' });
    expect(error!.message).toMatch(reason);
    expect(await listWebhooks(store)).toEqual([]);
  });

  it('makes a secret when none is given, shows it once, refuses a second endpoint of the same name, and asks PagerDuty for its routing key', async () => {
    const made = await addWebhook(store, config, newWebhookBody.parse({ name: 'oncall', url: receiver.url }));
    expect(made.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(JSON.stringify(await getWebhook(store, made.webhook.id))).not.toContain(made.secret);
    expect(await failure(addWebhook(store, config, newWebhookBody.parse({ name: 'oncall', url: receiver.url })))).toMatchObject({ status: 409 });
    expect(await failure(addWebhook(store, config, newWebhookBody.parse({ name: 'pd', url: 'https://events.pagerduty.com/v2/enqueue', format: 'pagerduty' })))).toMatchObject({ status: 400 });
  });

  it('sends a test message now, signed; while a secret rotates both verify; then only the new one', async () => {
    const made = await addWebhook(store, config, newWebhookBody.parse({ name: 'rotating', url: receiver.url }));
    secret = made.secret;
    expect(await sendTestMessage(store, config, made.webhook.id, 'alice')).toMatchObject({ outcome: 'delivered', status: 200 });
    const rotated = await changeWebhook(store, config, made.webhook.id, webhookChangeBody.parse({ rotateSecret: true }));
    expect(rotated.webhook.secrets).toBe(2);
    await sendTestMessage(store, config, made.webhook.id, 'alice');
    secret = rotated.secret!; // the receiver knows the new one only
    await sendTestMessage(store, config, made.webhook.id, 'alice');
    expect(receiver.received.map((r) => r.verified)).toEqual([true, true, true]);
    expect(receiver.received[1]!.body).toMatchObject({ type: 'alert.test', alert: { summary: 'Test message from Leasehold, sent by alice' } });
    await changeWebhook(store, config, made.webhook.id, webhookChangeBody.parse({ retirePreviousSecret: true }));
    secret = made.secret; // the old secret no longer signs
    await sendTestMessage(store, config, made.webhook.id, 'alice');
    expect(receiver.received.at(-1)!.verified).toBe(false);
    expect(await listDeliveries(store, { webhookId: made.webhook.id })).toHaveLength(4);
  });
});

describe('what the worker does with the answers', () => {
  it('410 Gone disables the endpoint and dead-letters the delivery; enabled again, a replay delivers it under the same webhook-id', async () => {
    const made = await addWebhook(store, config, newWebhookBody.parse({ name: 'gone', url: receiver.url }));
    secret = made.secret;
    receiver.failNext(410);
    await raiseMissed('pg/leases/gone-test');
    await worker().deliverDue();
    expect(await getWebhook(store, made.webhook.id)).toMatchObject({ enabled: false, disabledReason: expect.stringMatching(/410 Gone/) });
    const [dead] = await listDeliveries(store, { webhookId: made.webhook.id });
    expect(dead).toMatchObject({ status: 'dead', lastStatusCode: 410, attempts: 1 });
    await changeWebhook(store, config, made.webhook.id, webhookChangeBody.parse({ enabled: true }));
    expect(await replayDeliveries(store, made.webhook.id, null)).toEqual({ replayed: 1 });
    await worker().deliverDue();
    expect(await listDeliveries(store, { webhookId: made.webhook.id })).toMatchObject([{ status: 'delivered', lastStatusCode: 200 }]);
    expect(receiver.received.map((r) => r.id)).toEqual([dead!.messageId, dead!.messageId]);
  });

  it.each([['10.0.0.5', /10\.0\.0\.5.*private/], ['169.254.169.254', /169\.254\.169\.254/], ['::ffff:192.168.1.1', /192\.168\.1\.1/], ['127.0.0.2', /127\.0\.0\.2/]])(
    'a name that resolves to %s is refused before connecting: dead at once, with the reason',
    async (address, reason) => {
      const made = await addWebhook(store, config, newWebhookBody.parse({ name: 'internal', url: 'https://hooks.internal.test/leasehold' }));
      await raiseMissed(`pg/leases/ssrf-${address}`);
      await worker(address).deliverDue();
      const [delivery] = await listDeliveries(store, { webhookId: made.webhook.id });
      expect(delivery).toMatchObject({ status: 'dead', attempts: 1, lastStatusCode: null });
      expect(delivery!.lastError).toMatch(reason);
      expect(receiver.received).toHaveLength(0);
    },
  );

  it("the alerts page shows each alert's deliveries (endpoint, status, answer) to admins, and none to others", async () => {
    const good = await addWebhook(store, config, newWebhookBody.parse({ name: 'answers-200', url: receiver.url }));
    await addWebhook(store, config, newWebhookBody.parse({ name: 'answers-500', url: `${receiver.url}/failing` }));
    secret = good.secret;
    receiver.failPath('/hook/failing', 500);
    await raiseMissed('pg/leases/shown-deliveries');
    await worker().deliverDue();
    const page = await alertsPage(store, { manage: true });
    const alert = page.firing.find((a) => a.leaseId === 'pg/leases/shown-deliveries')!;
    const entry = page.deliveries![alert.id]!;
    expect(entry.total).toBe(2);
    expect(Object.fromEntries(entry.deliveries.map((d) => [d.webhookName, [d.status, d.lastStatusCode, d.event]]))).toEqual({
      'answers-200': ['delivered', 200, 'alert.firing'],
      'answers-500': ['pending', 500, 'alert.firing'],
    });
    expect((await alertsPage(store, { manage: false })).deliveries).toBeNull();
  });

  it('a failed attempt is retried with its Retry-After as a floor, then delivered', async () => {
    const made = await addWebhook(store, config, newWebhookBody.parse({ name: 'busy', url: receiver.url }));
    secret = made.secret;
    receiver.failNext(503);
    await raiseMissed('pg/leases/busy-test');
    const w = worker();
    await w.deliverDue();
    const [first] = await listDeliveries(store, { webhookId: made.webhook.id });
    expect(first).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: 503 });
    expect(new Date(first!.nextAttemptAt!).getTime()).toBeGreaterThan(Date.now() - 1000);
    await expect.poll(async () => (await w.deliverDue(), (await listDeliveries(store, { webhookId: made.webhook.id }))[0]!.status), { timeout: 10_000, interval: 50 }).toBe('delivered');
    expect(receiver.received.every((r) => r.verified)).toBe(true);
  });
});

describe('rules and silences', () => {
  it('refuses bad rule and silence bodies with a sentence, and fills a new rule from its type', async () => {
    expect(newRuleBody.safeParse({ name: 'r', type: 'nonsense' }).success).toBe(false);
    expect(newRuleBody.safeParse({ name: 'r', type: 'late_renewal', params: { marginPercent: 300 } }).success).toBe(false);
    expect(JSON.stringify(newRuleBody.safeParse({ name: 'r', type: 'failover', scope: 'everything' }).error?.issues)).toMatch(/source:<name>/);
    expect(JSON.stringify(newSilenceBody.safeParse({ scope: 'all', durationMs: 1000, reason: 'short' }).error?.issues)).toMatch(/10 characters/);
    expect(newSilenceBody.safeParse({ scope: 'all', reason: 'maintenance of the primary' }).success).toBe(false);
    const rule = await addRule(store, newRuleBody.parse({ name: 'Payments late', type: 'late_renewal', scope: 'source:payments' }));
    expect(rule).toMatchObject({ severity: RULE_DEFAULTS.late_renewal.severity, params: { marginPercent: 20 }, scope: 'source:payments', problem: null });
    const silence = await addSilence(store, newSilenceBody.parse({ scope: 'lease:pg/*', durationMs: 60_000, reason: 'failover drill on the primary' }), 'alice');
    expect(silence).toMatchObject({ author: 'alice', active: true, scope: 'lease:pg/*' });
  });

  it('disabling a rule resolves what it had open', async () => {
    await raiseMissed('pg/leases/rule-off');
    expect(await listAlerts(store, { state: 'firing', leaseId: 'pg/leases/rule-off' })).toHaveLength(1);
    await changeRule(store, config, 'default-missed-renewal', { enabled: false });
    expect(await listAlerts(store, { state: 'firing', leaseId: 'pg/leases/rule-off' })).toHaveLength(0);
    expect(await listAlerts(store, { state: 'resolved', leaseId: 'pg/leases/rule-off' })).toHaveLength(1);
    await changeRule(store, config, 'default-missed-renewal', { enabled: true });
  });
});
