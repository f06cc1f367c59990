// The embedded demo's own webhook receiver (/demo/inbox): an endpoint "demo-inbox" pointing at
// this server's POST /api/v1/demo/inbox, so that a newcomer sees the scheduler's missed
// renewals and failovers arrive, signed, within a second of happening. Each message is checked
// as a receiver would (the Standard Webhooks signature, with the endpoint's secret) and the
// last 200 are kept in memory, in the composition root (lib/root) that serves them.
import { timingSafeEqual } from 'node:crypto';
import { signatureHeader } from './deliver/sign';
import { generateWebhookSecret } from './deliver/secret';
import type { Store } from '../db';
import { SecretUnreadableError } from '../db/secret-box';
import { createWebhook, getWebhookForSending, listWebhooks, updateWebhook } from '../db/webhooks';
import type { AlertMessage } from '../domain/alert-types';
import type { InboxMessage } from '../domain/schemas/demo';
import { systemClock } from '../time/clock';
import { part, type Parts } from '../parts';

export const DEMO_INBOX = 'demo-inbox';
const KEEP = 200;
/** A signature older or newer than this is refused, as the specification advises. */
const TOLERANCE_S = 300;

/** A message as kept and shown (GET /api/v1/demo/inbox): lib/domain/schemas/demo.ts. */
export type { InboxMessage };

const INBOX = part<{ messages: InboxMessage[]; webhookId: string | null }>('demo inbox', () => ({ messages: [], webhookId: null }));

/** Makes (or points at this server) the demo's endpoint. */
export async function ensureDemoInbox(root: Parts, store: Store, port: number): Promise<void> {
  const inbox = root.part(INBOX);
  const url = `http://127.0.0.1:${port}/api/v1/demo/inbox`;
  const existing = (await listWebhooks(store)).find((w) => w.name === DEMO_INBOX);
  // Its secret signs for this server's own inbox only: without LEASEHOLD_SECRET_KEY it is kept
  // as it is (the demo needs no setting), with one it is sealed like any other.
  if (!existing) {
    inbox.webhookId = (await createWebhook(store, { name: DEMO_INBOX, url, format: 'native', secret: generateWebhookSecret(), routingKey: null, rules: [], keepPlainWithoutKey: true })).id;
    return;
  }
  inbox.webhookId = existing.id;
  const full = await getWebhookForSending(store, existing.id).catch((error: unknown) => {
    // Sealed with a key this run does not have: a new secret (nobody else checks this one's signatures).
    if (error instanceof SecretUnreadableError) return null;
    throw error;
  });
  if (!full) await updateWebhook(store, existing.id, { url, rotateSecret: generateWebhookSecret(), retirePreviousSecret: true, keepPlainWithoutKey: true });
  else if (full.url !== url) await updateWebhook(store, existing.id, { url });
}

export function inboxMessages(root: Parts): InboxMessage[] {
  return [...root.part(INBOX).messages].reverse();
}

/** Checks and keeps one delivery; false when this server runs no demo inbox. */
export async function receiveInboxMessage(root: Parts, store: Store, headers: Headers, body: string): Promise<boolean> {
  const { webhookId, messages } = root.part(INBOX);
  if (!webhookId) return false;
  const id = headers.get('webhook-id') ?? '';
  const timestamp = headers.get('webhook-timestamp') ?? '';
  const signatures = (headers.get('webhook-signature') ?? '').split(' ').filter(Boolean);
  const secrets = (await getWebhookForSending(store, webhookId).catch(() => null))?.secrets ?? [];
  let problem: string | null = null;
  const seconds = Number(timestamp);
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(systemClock.wall() / 1000 - seconds) > TOLERANCE_S) problem = 'the timestamp is missing or too far from now';
  else if (!secrets.some((secret) => signatures.some((given) => same(given, signatureHeader([secret], id, seconds, body))))) problem = 'no signature matches the endpoint\'s secret';
  let message: Partial<AlertMessage> | null = null;
  try {
    message = JSON.parse(body) as Partial<AlertMessage>;
  } catch {
    problem ??= 'the body is not JSON';
  }
  const alert = message?.alert;
  const now = systemClock.wall();
  messages.push({
    id: id.slice(0, 100),
    receivedAt: new Date(now).toISOString(),
    verified: problem === null,
    problem,
    type: typeof message?.type === 'string' ? message.type : null,
    rule: typeof alert?.rule?.type === 'string' ? alert.rule.type : null,
    severity: typeof alert?.severity === 'string' ? alert.severity : null,
    summary: typeof alert?.summary === 'string' ? alert.summary.slice(0, 500) : null,
    leaseId: typeof alert?.leaseId === 'string' ? alert.leaseId : null,
    delayMs: message?.type === 'alert.firing' && typeof alert?.startsAt === 'string' ? Math.max(0, now - Date.parse(alert.startsAt)) : null,
  });
  if (messages.length > KEEP) messages.splice(0, messages.length - KEEP);
  return true;
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
