// The Webhook table: endpoints with their format, secrets (never returned) and the rules they take.
// Signing secrets and routing keys are sealed at rest (secret-box.ts): written sealed, opened
// only for sending (getWebhookForSending, and lib/db/deliveries.ts for the outbox).
import { randomUUID } from 'node:crypto';
import { isSealed, needsResealing, processKeyring, seal, sealedKeyId, SecretUnreadableError, unseal, type Keyring } from './secret-box';
import type { Store } from './store';
import type { WebhookView } from '../domain/schemas/webhooks';

export type WebhookRecord = Awaited<ReturnType<Store['prisma']['webhook']['findMany']>>[number];

/** What the API shows of an endpoint: never its secrets or routing key, and its URL without what may be a credential (lib/domain/schemas/webhooks.ts). */
export type { WebhookView };

/**
 * A webhook URL as shown: scheme, host, port and the first path segment; the rest, the query
 * and any user info removed (Slack's and others' URLs carry their credential in the path).
 */
export function shownWebhookUrl(url: string): string {
  try {
    const u = new URL(url);
    const [first, ...rest] = u.pathname.split('/').filter(Boolean);
    return `${u.protocol}//${u.host}${first ? `/${first}` : ''}${rest.length || u.search ? '/…' : ''}`;
  } catch {
    return '(not a URL)';
  }
}

export function webhookView(row: WebhookRecord): WebhookView {
  return {
    id: row.id,
    name: row.name,
    url: shownWebhookUrl(row.url),
    format: row.format,
    rules: row.rules ?? [],
    enabled: row.enabled,
    disabledReason: row.disabledReason,
    secrets: (row.secrets ?? []).length,
    hasRoutingKey: row.routingKey !== null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export class WebhookNameTakenError extends Error {
  constructor(readonly webhookName: string) {
    super(`An endpoint named "${webhookName}" already exists: choose another name.`);
    this.name = 'WebhookNameTakenError';
  }
}

/** Where each sealed value of an endpoint is bound to (a sealed value copied elsewhere does not open). */
export const secretContext = (webhookId: string) => `webhook ${webhookId} secret`;
export const routingKeyContext = (webhookId: string) => `webhook ${webhookId} routingKey`;

/**
 * A value as the store keeps it: sealed with this process's key. `keepPlainWithoutKey`: without
 * a key it is kept as it is (the demo's own endpoint only: it signs for its own inbox, on the
 * same server, and the demo must run without any setting); with one it is sealed like the rest.
 */
function sealFor(keyring: Keyring, plain: string, context: string, keepPlainWithoutKey = false): string {
  if (!keyring.current && keepPlainWithoutKey) return plain;
  return seal(keyring, plain, context, 'An alert endpoint\'s signing secret');
}

export type NewWebhook = { name: string; url: string; format: string; secret: string; routingKey: string | null; rules: string[]; keepPlainWithoutKey?: boolean };

export async function createWebhook(store: Store, input: NewWebhook): Promise<WebhookView> {
  const keyring = processKeyring();
  const id = randomUUID();
  const secrets = [sealFor(keyring, input.secret, secretContext(id), input.keepPlainWithoutKey)];
  const routingKey = input.routingKey === null ? null : sealFor(keyring, input.routingKey, routingKeyContext(id), input.keepPlainWithoutKey);
  try {
    const row = await store.prisma.webhook.create({
      data: { id, name: input.name, url: input.url, format: input.format, secrets, routingKey, rules: input.rules },
    });
    return webhookView(row);
  } catch (error) {
    if ((error as { code?: string }).code === 'P2002') throw new WebhookNameTakenError(input.name);
    throw error;
  }
}

export async function listWebhooks(store: Store): Promise<WebhookView[]> {
  return (await store.prisma.webhook.findMany({ orderBy: { name: 'asc' } })).map(webhookView);
}

export async function getWebhook(store: Store, id: string): Promise<WebhookView | null> {
  const row = await store.prisma.webhook.findUnique({ where: { id } });
  return row ? webhookView(row) : null;
}

/** The endpoint with its secrets and routing key opened, for sending; SecretUnreadableError when this process cannot open them. */
export async function getWebhookForSending(store: Store, id: string): Promise<WebhookRecord | null> {
  const row = await store.prisma.webhook.findUnique({ where: { id } });
  return row ? { ...row, ...openedSecrets(processKeyring(), row) } : null;
}

/** An endpoint's secrets and routing key as they were given (throws SecretUnreadableError). */
export function openedSecrets(keyring: Keyring, row: { id: string; secrets: string[] | null; routingKey: string | null }): { secrets: string[]; routingKey: string | null } {
  return {
    secrets: (row.secrets ?? []).map((stored) => unseal(keyring, stored, secretContext(row.id))),
    routingKey: row.routingKey === null ? null : unseal(keyring, row.routingKey, routingKeyContext(row.id)),
  };
}

export type WebhookChange = {
  name?: string;
  url?: string;
  format?: string;
  rules?: string[];
  enabled?: boolean;
  routingKey?: string | null;
  /** A new secret: it signs from now on, and the current one signs too until `retirePreviousSecret`. */
  rotateSecret?: string;
  retirePreviousSecret?: boolean;
};

export async function updateWebhook(store: Store, id: string, change: WebhookChange & { keepPlainWithoutKey?: boolean }): Promise<WebhookView | null> {
  const keyring = processKeyring();
  const row = await store.prisma.webhook.findUnique({ where: { id } });
  if (!row) return null;
  // The secrets kept stay as they are stored; only a new one is sealed here.
  let secrets = row.secrets ?? [];
  if (change.rotateSecret) secrets = [sealFor(keyring, change.rotateSecret, secretContext(id), change.keepPlainWithoutKey), ...secrets.slice(0, 1)];
  if (change.retirePreviousSecret) secrets = secrets.slice(0, 1);
  const routingKey = change.routingKey === undefined || change.routingKey === null ? change.routingKey : sealFor(keyring, change.routingKey, routingKeyContext(id), change.keepPlainWithoutKey);
  try {
    const updated = await store.prisma.webhook.update({
      where: { id },
      data: {
        ...(change.name !== undefined ? { name: change.name } : {}),
        ...(change.url !== undefined ? { url: change.url } : {}),
        ...(change.format !== undefined ? { format: change.format } : {}),
        ...(change.rules !== undefined ? { rules: change.rules } : {}),
        ...(routingKey !== undefined ? { routingKey } : {}),
        // Enabled by a person: whatever disabled it is forgotten.
        ...(change.enabled !== undefined ? { enabled: change.enabled, disabledReason: change.enabled ? null : 'disabled by a person' } : {}),
        secrets,
      },
    });
    return webhookView(updated);
  } catch (error) {
    if ((error as { code?: string }).code === 'P2002' && change.name) throw new WebhookNameTakenError(change.name);
    throw error;
  }
}

export async function deleteWebhook(store: Store, id: string): Promise<boolean> {
  const { count } = await store.prisma.webhook.deleteMany({ where: { id } });
  return count === 1;
}

/** What the store holds of endpoints' secrets, against this process's keys (checked when a process that sends starts). */
export type SecretsAtRest = {
  /** Endpoints with a secret or routing key kept as it is (written before secrets were sealed, or the demo's own without a key). */
  plain: { id: string; name: string }[];
  /** Endpoints sealed with a key this process does not have, and which key. */
  unreadable: { id: string; name: string; keyId: string }[];
  /** Endpoints sealed again with the current key now (kept as they were, or sealed with a previous one). */
  resealed: number;
};

/**
 * Seals again, with the current key, every secret and routing key that is kept as it is or
 * sealed with a previous key (this is how a rotation ends: the server starts with the new key
 * as LEASEHOLD_SECRET_KEY and the old one in LEASEHOLD_SECRET_KEY_PREVIOUS, and nothing needs
 * the old one afterwards), and reports what it cannot read. Without a key it changes nothing
 * and reports. Each endpoint is written in one statement; several processes starting at once
 * write the same values.
 */
export async function resealWebhookSecrets(store: Store, keyring: Keyring = processKeyring()): Promise<SecretsAtRest> {
  const rows = await store.prisma.webhook.findMany({ select: { id: true, name: true, secrets: true, routingKey: true }, orderBy: { name: 'asc' } });
  const result: SecretsAtRest = { plain: [], unreadable: [], resealed: 0 };
  for (const row of rows) {
    const stored = [...(row.secrets ?? []), ...(row.routingKey === null ? [] : [row.routingKey])];
    const unknown = stored.map(sealedKeyId).find((keyId) => keyId !== null && !keyring.byId.has(keyId));
    if (unknown) {
      result.unreadable.push({ id: row.id, name: row.name, keyId: unknown });
      continue;
    }
    if (!keyring.current) {
      if (stored.some((value) => !isSealed(value))) result.plain.push({ id: row.id, name: row.name });
      continue;
    }
    if (!stored.some((value) => needsResealing(keyring, value))) continue;
    let opened;
    try {
      opened = openedSecrets(keyring, row);
    } catch (error) {
      if (!(error instanceof SecretUnreadableError)) throw error;
      result.unreadable.push({ id: row.id, name: row.name, keyId: error.keyId ?? '?' });
      continue;
    }
    await store.prisma.webhook.update({
      where: { id: row.id },
      data: {
        secrets: opened.secrets.map((secret) => seal(keyring, secret, secretContext(row.id), 'An alert endpoint\'s signing secret')),
        routingKey: opened.routingKey === null ? null : seal(keyring, opened.routingKey, routingKeyContext(row.id), 'An alert endpoint\'s routing key'),
      },
    });
    result.resealed += 1;
  }
  return result;
}
