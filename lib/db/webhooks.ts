// The Webhook table: endpoints with their format, secrets (never returned) and the rules they take.
import { randomUUID } from 'node:crypto';
import type { Store } from './store';

export type WebhookRecord = Awaited<ReturnType<Store['prisma']['webhook']['findMany']>>[number];

/** What the API shows of an endpoint: never its secrets or routing key, and its URL without what may be a credential. */
export type WebhookView = {
  id: string;
  name: string;
  url: string;
  format: string;
  rules: string[];
  enabled: boolean;
  disabledReason: string | null;
  /** Two secrets sign while one is being rotated. */
  secrets: number;
  hasRoutingKey: boolean;
  createdAt: string;
  updatedAt: string;
};

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

export type NewWebhook = { name: string; url: string; format: string; secret: string; routingKey: string | null; rules: string[] };

export async function createWebhook(store: Store, input: NewWebhook): Promise<WebhookView> {
  try {
    const row = await store.prisma.webhook.create({
      data: { id: randomUUID(), name: input.name, url: input.url, format: input.format, secrets: [input.secret], routingKey: input.routingKey, rules: input.rules },
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

/** The endpoint with its secrets, for sending a test message. */
export async function getWebhookForSending(store: Store, id: string): Promise<WebhookRecord | null> {
  return store.prisma.webhook.findUnique({ where: { id } });
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

export async function updateWebhook(store: Store, id: string, change: WebhookChange): Promise<WebhookView | null> {
  const row = await store.prisma.webhook.findUnique({ where: { id } });
  if (!row) return null;
  let secrets = row.secrets ?? [];
  if (change.rotateSecret) secrets = [change.rotateSecret, ...secrets.slice(0, 1)];
  if (change.retirePreviousSecret) secrets = secrets.slice(0, 1);
  try {
    const updated = await store.prisma.webhook.update({
      where: { id },
      data: {
        ...(change.name !== undefined ? { name: change.name } : {}),
        ...(change.url !== undefined ? { url: change.url } : {}),
        ...(change.format !== undefined ? { format: change.format } : {}),
        ...(change.rules !== undefined ? { rules: change.rules } : {}),
        ...(change.routingKey !== undefined ? { routingKey: change.routingKey } : {}),
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
