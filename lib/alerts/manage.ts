// Webhook endpoints, alert rules and silences as admins manage them (the /alerts page, the API
// and the CLI): bodies checked with zod at the edge, every refusal a sentence naming what was
// wrong. A secret is shown once, when it is made; never again.
import { isIP } from 'node:net';
import { z } from 'zod';
import type { AlertsConfig } from '../config/alerts-schema';
import { resolveAlertsOfRule } from '../db/alerts';
import { createRule, deleteRule, readRuleType, updateRule, type AlertRuleView } from '../db/alert-rules';
import { claimDelivery, replayDeadDeliveries } from '../db/deliveries';
import { queueTestMessage } from '../db/alerts';
import { createSilence, endSilence, type SilenceView } from '../db/silences';
import type { Store } from '../db/store';
import { SecretKeyMissingError } from '../db/secret-box';
import { createWebhook, deleteWebhook, getWebhook, updateWebhook, WebhookNameTakenError, type WebhookView } from '../db/webhooks';
import { ALERT_RULE_REGISTRY, NO_FACTS } from '../domain/alert-rules';
import { ALERT_RULE_TYPES, type AlertView } from '../domain/alert-types';
import { ManageError } from '../auth/manage';
import { RuleNameTakenError } from '../db/alert-rules';
import { EgressRefusedError, validateAllowCidrs, vetDestination } from './deliver/egress';
import { WEBHOOK_FORMATS } from './deliver/formats';
import { generateWebhookSecret, parseWebhookSecret } from './deliver/secret';
import { ms, name, scope } from './body-fields';
import { alertLinker } from './link';
import { checkRuleParams, type newRuleBody, type ruleChangeBody } from './rule-bodies';
import { DeliveryWorker } from './worker';
import { silentLogger } from '../log';
import { systemClock } from '../time/clock';

/** A refusal with its status, code and sentence: the same class users and tokens use. */
export { ManageError as AlertManageError };

const url = z.string().max(2048, { error: 'expected a URL of at most 2048 characters' }).refine(
  (value) => {
    try {
      const u = new URL(value);
      return (u.protocol === 'https:' || u.protocol === 'http:') && u.hostname !== '';
    } catch {
      return false;
    }
  },
  { error: 'expected an https:// URL (http:// only to an address inside alerts.allowCidrs)' },
);
const secret = z.string().refine(
  (value) => {
    try {
      parseWebhookSecret(value);
      return true;
    } catch {
      return false;
    }
  },
  { error: 'expected a secret "whsec_" followed by the base64 of 24 to 64 random bytes (leave it out and one is made)' },
);
const ruleRef = z.string().min(1).max(100);
const format = z.enum(WEBHOOK_FORMATS, { error: `expected one of ${WEBHOOK_FORMATS.join(', ')}` });
const routingKey = z.string().min(1).max(200);

export const newWebhookBody = z.strictObject({
  name,
  url,
  format: format.default('native'),
  secret: secret.optional(),
  /** PagerDuty's integration (routing) key: needed by the pagerduty format. */
  routingKey: routingKey.optional(),
  /** Rule types or rule ids it receives; empty or absent: all. */
  rules: z.array(ruleRef).max(50).default([]),
});

export const webhookChangeBody = z.strictObject({
  name: name.optional(),
  url: url.optional(),
  format: format.optional(),
  rules: z.array(ruleRef).max(50).optional(),
  enabled: z.boolean().optional(),
  routingKey: routingKey.nullable().optional(),
  /** A new secret signs from now on; the current one signs too until retirePreviousSecret. true: one is made. */
  rotateSecret: z.union([z.literal(true), secret]).optional(),
  retirePreviousSecret: z.literal(true).optional(),
});

/**
 * An endpoint whose host is an IP address Leasehold would not connect to is refused when it is
 * made, with the same sentence a delivery would fail with. A name is vetted at each connection
 * (it may resolve elsewhere by then): nothing is looked up here.
 */
async function checkDestination(target: string, config: AlertsConfig) {
  const u = new URL(target);
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host) === 0) return;
  try {
    await vetDestination(host, u.protocol, validateAllowCidrs(config.allowCidrs));
  } catch (error) {
    if (error instanceof EgressRefusedError) throw new ManageError(422, 'destination_refused', `${error.message}. Leasehold will not send there.`);
    throw error;
  }
}

function checkFormatNeeds(fmt: string, hasKey: boolean) {
  if (fmt === 'pagerduty' && !hasKey) throw new ManageError(400, 'invalid_body', 'The pagerduty format needs "routingKey": the integration key of a PagerDuty Events API v2 service.');
}

/** This server cannot seal a secret (no LEASEHOLD_SECRET_KEY): a 503 that says what to set, instead of a secret stored in the clear. */
const sealingRefused = (error: unknown) => (error instanceof SecretKeyMissingError ? new ManageError(503, 'secret_key_missing', error.message) : error);

export async function addWebhook(store: Store, config: AlertsConfig, body: z.output<typeof newWebhookBody>): Promise<{ webhook: WebhookView; secret: string }> {
  await checkDestination(body.url, config);
  checkFormatNeeds(body.format, Boolean(body.routingKey));
  const signing = body.secret ?? generateWebhookSecret();
  try {
    const webhook = await createWebhook(store, { name: body.name, url: body.url, format: body.format, secret: signing, routingKey: body.routingKey ?? null, rules: body.rules });
    return { webhook, secret: signing };
  } catch (error) {
    if (error instanceof WebhookNameTakenError) throw new ManageError(409, 'webhook_exists', error.message);
    throw sealingRefused(error);
  }
}

export async function changeWebhook(store: Store, config: AlertsConfig, id: string, change: z.output<typeof webhookChangeBody>): Promise<{ webhook: WebhookView; secret?: string }> {
  const current = await getWebhook(store, id);
  if (!current) throw new ManageError(404, 'not_found', 'No such endpoint.');
  if (change.url) await checkDestination(change.url, config);
  checkFormatNeeds(change.format ?? current.format, change.routingKey === undefined ? current.hasRoutingKey : Boolean(change.routingKey));
  const rotated = change.rotateSecret === true ? generateWebhookSecret() : change.rotateSecret;
  try {
    const webhook = await updateWebhook(store, id, { ...change, rotateSecret: rotated });
    if (!webhook) throw new ManageError(404, 'not_found', 'No such endpoint.');
    if (change.enabled) store.outbox.changed(); // what waited for it goes now
    return rotated ? { webhook, secret: rotated } : { webhook };
  } catch (error) {
    if (error instanceof WebhookNameTakenError) throw new ManageError(409, 'webhook_exists', error.message);
    throw sealingRefused(error);
  }
}

export async function removeWebhook(store: Store, id: string): Promise<void> {
  if (!(await deleteWebhook(store, id))) throw new ManageError(404, 'not_found', 'No such endpoint.');
}

/** A test message, sent now through the whole path (build, sign, vet, send) and kept in the endpoint's delivery log. */
export async function sendTestMessage(store: Store, config: AlertsConfig, id: string, by: string): Promise<{ deliveryId: string; outcome: string; status: number | null; latencyMs: number | null; error: string | null }> {
  const webhook = await getWebhook(store, id);
  if (!webhook) throw new ManageError(404, 'not_found', 'No such endpoint.');
  const now = new Date(systemClock.wall());
  const view: AlertView = {
    id: '',
    fingerprint: '0'.repeat(32),
    rule: { id: 'test', name: 'Test message', type: 'missed_renewal' },
    severity: 'info',
    status: 'firing',
    source: 'leasehold',
    leaseId: null,
    leaseKey: null,
    ...NO_FACTS,
    summary: `Test message from Leasehold, sent by ${by}`,
    startsAt: now.toISOString(),
    endsAt: null,
    occurrences: 1,
  };
  const linkOf = alertLinker(config.publicUrl);
  const workerId = `test:${process.pid}:${now.getTime()}`;
  // Queued (so the log keeps it), then claimed by this request at once and sent here; not retried.
  const deliveryId = await queueTestMessage(store, id, view, { linkOf }, now);
  const claimed = await claimDelivery(store, deliveryId, workerId, config.timeoutMs * 3);
  if (!claimed) throw new ManageError(409, 'not_claimed', 'The test message was taken by a delivery worker first: see the delivery log.');
  const worker = new DeliveryWorker({ store, config: { ...config, maxAttempts: 1 }, workerId, linkOf, log: silentLogger() });
  try {
    return { deliveryId, ...(await worker.deliverOne(claimed)) };
  } finally {
    await worker.close();
  }
}

/** Dead deliveries of an endpoint (or one of them) back in the queue. */
export async function replayDeliveries(store: Store, webhookId: string, deliveryId: string | null): Promise<{ replayed: number }> {
  if (!(await getWebhook(store, webhookId))) throw new ManageError(404, 'not_found', 'No such endpoint.');
  const replayed = await replayDeadDeliveries(store, webhookId, deliveryId);
  if (replayed > 0) store.outbox.changed();
  return { replayed };
}

// ---- rules

// The bodies are built from the list of rules (rule-bodies.ts): each type's parameters are its module's.
export { newRuleBody, ruleChangeBody } from './rule-bodies';

const ruleTaken = (error: unknown) => (error instanceof RuleNameTakenError ? new ManageError(409, 'rule_exists', error.message) : error);

/** A new rule: its type's severity unless one is given; its parameters are the body's, its type's defaults filled in by the schema. */
export async function addRule(store: Store, body: z.output<typeof newRuleBody>): Promise<AlertRuleView> {
  return createRule(store, { ...body, severity: body.severity ?? ALERT_RULE_REGISTRY.get(body.type)!.severity }).catch((error: unknown) => {
    throw ruleTaken(error);
  });
}

/** New parameters are checked by the schema of the rule's type (which never changes), read first. */
async function checkedParams(store: Store, id: string, params: unknown) {
  const type = await readRuleType(store, id);
  if (type === null) throw new ManageError(404, 'not_found', 'No such rule.');
  const checked = checkRuleParams(type, params);
  if (!checked.ok) throw new ManageError(400, 'invalid_body', `The parameters do not fit a ${type.slice(0, 40)} rule (${checked.error}).`);
  return checked.params;
}

export async function changeRule(store: Store, config: AlertsConfig, id: string, body: z.output<typeof ruleChangeBody>): Promise<AlertRuleView> {
  const change = { ...body, params: body.params === undefined ? undefined : await checkedParams(store, id, body.params) };
  const rule = await updateRule(store, id, change).catch((error: unknown) => {
    throw ruleTaken(error);
  });
  if (!rule) throw new ManageError(404, 'not_found', 'No such rule.');
  // A rule turned off says nothing any more: what it had open is resolved.
  if (change.enabled === false) await resolveAlertsOfRule(store, id, { linkOf: alertLinker(config.publicUrl) }).then((n) => n > 0 && store.outbox.changed());
  return rule;
}

export async function removeRule(store: Store, config: AlertsConfig, id: string): Promise<void> {
  if (!(await deleteRule(store, id))) throw new ManageError(404, 'not_found', 'No such rule.');
  if ((await resolveAlertsOfRule(store, id, { linkOf: alertLinker(config.publicUrl) })) > 0) store.outbox.changed();
}

// ---- silences

export const newSilenceBody = z
  .strictObject({
    scope,
    ruleType: z.enum(ALERT_RULE_TYPES).nullable().default(null),
    startsAt: z.iso.datetime({ offset: true, error: 'expected an ISO 8601 date and time' }).optional(),
    endsAt: z.iso.datetime({ offset: true, error: 'expected an ISO 8601 date and time' }).optional(),
    /** Instead of endsAt: how long from startsAt (or now). */
    durationMs: ms(90 * 86_400_000).optional(),
    reason: z.string().trim().min(10, { error: 'expected a reason of at least 10 characters' }).max(1000),
  })
  .refine((body) => (body.endsAt === undefined) !== (body.durationMs === undefined), { error: 'expected either "endsAt" or "durationMs"' });

export async function addSilence(store: Store, body: z.output<typeof newSilenceBody>, author: string): Promise<SilenceView> {
  const startsAt = body.startsAt ? new Date(body.startsAt) : new Date(systemClock.wall());
  const endsAt = body.endsAt ? new Date(body.endsAt) : new Date(startsAt.getTime() + body.durationMs!);
  if (endsAt.getTime() <= startsAt.getTime()) throw new ManageError(400, 'invalid_body', 'A silence must end after it starts.');
  if (endsAt.getTime() <= systemClock.wall()) throw new ManageError(400, 'invalid_body', 'That silence would have ended already.');
  return createSilence(store, { scope: body.scope, ruleType: body.ruleType, startsAt, endsAt, reason: body.reason, author });
}

export async function stopSilence(store: Store, id: string): Promise<SilenceView> {
  const silence = await endSilence(store, id);
  if (!silence) throw new ManageError(404, 'not_found', 'No such silence.');
  store.outbox.changed(); // what it held back goes now
  return silence;
}

export const replayBody = z.strictObject({ deliveryId: z.string().regex(/^\d{1,19}$/, { error: 'expected a delivery id' }).optional() });
