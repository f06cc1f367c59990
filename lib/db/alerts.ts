// Alerts and the outbox (docs/alerts.md): an alert's change of state and the delivery rows
// it causes are written in one transaction, so a delivery is never lost and never made for a
// change that did not happen. At most one alert per rule and subject is open: "openKey" is the
// fingerprint while firing (unique), NULL once resolved. Raw SQL, the same on PostgreSQL and
// PGlite; nothing else is awaited inside a transaction (PGlite is one session).
import { randomUUID } from 'node:crypto';
import type { AlertFacts } from '../domain/alert-rules';
import { parseScope } from '../domain/alert-scope';
import type { AlertMessage, AlertRuleType, AlertSeverity, AlertView } from '../domain/alert-types';
import { isSilenced, type Silence } from '../domain/silences';
import type { SqlSession } from './sql';
import type { Store } from './store';
import { systemClock } from '../time/clock';

/** What the rule engine asks of the store: raise (or repeat) an alert, or clear it. */
export type AlertWrite =
  | {
      op: 'raise';
      fingerprint: string;
      rule: { id: string; name: string; type: AlertRuleType };
      severity: AlertSeverity;
      source: string;
      leaseId: string | null;
      leaseKey: string | null;
      summary: string;
      facts: AlertFacts;
      /** Event alerts resolve by themselves after this long without a repeat. */
      resolveAfterMs: number | null;
    }
  | { op: 'clear'; fingerprint: string };

export type OutboxContext = {
  /** The console's page for an alert's lease or source. */
  linkOf: (view: AlertView) => string | null;
  nowWall?: number;
};

export type AlertRow = {
  id: string | bigint;
  fingerprint: string;
  ruleId: string;
  ruleType: string;
  ruleName: string;
  severity: string;
  state: 'firing' | 'resolved';
  source: string;
  leaseId: string | null;
  leaseKey: string | null;
  summary: string;
  facts: AlertFacts | string;
  occurrences: number;
  silenced: boolean;
  notified: boolean;
  startedAt: Date | string;
  updatedAt: Date | string;
  resolveAt: Date | string | null;
  resolvedAt: Date | string | null;
};

const iso = (value: Date | string | null) => (value === null ? null : new Date(value).toISOString());

/** The one converter from a stored alert to the API's view. */
export function alertView(row: AlertRow): AlertView {
  const facts = (typeof row.facts === 'string' ? JSON.parse(row.facts) : row.facts) as Partial<AlertFacts>;
  return {
    id: String(row.id),
    fingerprint: row.fingerprint,
    rule: { id: row.ruleId, name: row.ruleName, type: row.ruleType as AlertRuleType },
    severity: row.severity as AlertSeverity,
    status: row.state,
    source: row.source,
    leaseId: row.leaseId,
    leaseKey: row.leaseKey,
    holder: facts.holder ?? null,
    previousHolder: facts.previousHolder ?? null,
    token: facts.token ?? null,
    previousToken: facts.previousToken ?? null,
    ttlMs: facts.ttlMs ?? null,
    marginMs: facts.marginMs ?? null,
    gapMs: facts.gapMs ?? null,
    summary: row.summary,
    startsAt: iso(row.startedAt)!,
    endsAt: iso(row.resolvedAt),
    occurrences: row.occurrences,
    detail: facts.detail ?? null,
  };
}

type Endpoint = { id: string; rules: string[] | null };
type SilenceRow = { id: string; scope: string; ruleType: string | null; startsAt: Date | string; endsAt: Date | string; reason: string; author: string };

export function silenceOf(row: SilenceRow): Silence | null {
  const scope = parseScope(row.scope);
  if (!scope.ok) return null; // a row edited by hand into nonsense silences nothing
  return { id: row.id, scope: scope.scope, ruleType: row.ruleType as AlertRuleType | null, startsAtWall: new Date(row.startsAt).getTime(), endsAtWall: new Date(row.endsAt).getTime(), reason: row.reason, author: row.author };
}

async function activeSilences(sql: SqlSession, now: Date): Promise<Silence[]> {
  const rows = await sql.query<SilenceRow>(`SELECT * FROM "Silence" WHERE "startsAt" <= $1 AND "endsAt" > $1`, [now]);
  return rows.map(silenceOf).filter((s) => s !== null);
}

const enabledEndpoints = (sql: SqlSession) => sql.query<Endpoint>(`SELECT id, rules FROM "Webhook" WHERE enabled`);

/** Whether an endpoint takes this alert: it lists no rules, or the alert's rule type or id. */
export const endpointTakes = (endpoint: { rules: string[] | null }, view: AlertView) =>
  !endpoint.rules || endpoint.rules.length === 0 || endpoint.rules.includes(view.rule.type) || endpoint.rules.includes(view.rule.id);

/** A Standard Webhooks message id: the same on every attempt of one delivery. */
export const newMessageId = () => `msg_${randomUUID().replaceAll('-', '')}`;

/** Puts one message per endpoint that takes it in the outbox; returns how many. */
export async function queueMessages(sql: SqlSession, endpoints: readonly Endpoint[], view: AlertView, type: AlertMessage['type'], ctx: OutboxContext, now: Date, eventName: string = type): Promise<number> {
  const targets = endpoints.filter((e) => endpointTakes(e, view));
  if (targets.length === 0) return 0;
  const message: AlertMessage = { type, at: now.toISOString(), alert: view, link: ctx.linkOf(view) };
  const params: unknown[] = [];
  const values = targets.map((endpoint) => {
    params.push(newMessageId(), endpoint.id, view.id === '' ? null : view.id, eventName, JSON.stringify(message), now);
    const n = params.length;
    return `($${n - 5}, $${n - 4}, $${n - 3}::bigint, $${n - 2}, $${n - 1}::jsonb, $${n})`;
  });
  await sql.query(`INSERT INTO "WebhookDelivery" ("messageId", "webhookId", "alertId", "event", "payload", "nextAttemptAt") VALUES ${values.join(', ')}`, params);
  return targets.length;
}

export type AppliedAlerts = { fired: AlertView[]; resolved: AlertView[]; repeated: number; queued: number };

/** Applies the engine's writes in one transaction: alerts raised, repeated or resolved, and their deliveries queued. */
export async function applyAlertWrites(store: Store, writes: readonly AlertWrite[], ctx: OutboxContext): Promise<AppliedAlerts> {
  const out: AppliedAlerts = { fired: [], resolved: [], repeated: 0, queued: 0 };
  if (writes.length === 0) return out;
  const now = new Date(ctx.nowWall ?? systemClock.wall());
  await store.transaction(async (sql) => {
    const [endpoints, silences] = [await enabledEndpoints(sql), await activeSilences(sql, now)];
    for (const write of writes) {
      if (write.op === 'raise') {
        const silenced = isSilenced(silences, { source: write.source, leaseId: write.leaseId, ruleType: write.rule.type }, now.getTime());
        const resolveAt = write.resolveAfterMs === null ? null : new Date(now.getTime() + write.resolveAfterMs);
        // One statement: a new alert, or a repeat of the open one (its facts refreshed, its
        // resolution put off). xmax = 0 only on a row this statement inserted.
        const [row] = await sql.query<AlertRow & { inserted: boolean }>(
          `INSERT INTO "Alert" ("fingerprint", "openKey", "ruleId", "ruleType", "ruleName", "severity", "state", "source", "leaseId", "leaseKey", "summary", "facts", "silenced", "startedAt", "updatedAt", "resolveAt")
           VALUES ($1, $1, $2, $3, $4, $5, 'firing', $6, $7, $8, $9, $10::jsonb, $11, $12, $12, $13)
           ON CONFLICT ("openKey") DO UPDATE SET "occurrences" = "Alert"."occurrences" + 1, "summary" = EXCLUDED."summary", "facts" = EXCLUDED."facts", "updatedAt" = EXCLUDED."updatedAt", "resolveAt" = EXCLUDED."resolveAt"
           RETURNING *, (xmax = 0) AS inserted`,
          [write.fingerprint, write.rule.id, write.rule.type, write.rule.name, write.severity, write.source, write.leaseId, write.leaseKey, write.summary, JSON.stringify(write.facts), silenced, now, resolveAt],
        );
        if (!row!.inserted) {
          out.repeated += 1;
          continue;
        }
        const view = alertView(row!);
        out.fired.push(view);
        if (silenced) continue;
        const queued = await queueMessages(sql, endpoints, view, 'alert.firing', ctx, now);
        await sql.query(`UPDATE "Alert" SET "notified" = true WHERE id = $1`, [row!.id]);
        out.queued += queued;
      } else {
        const resolved = await resolveWhere(sql, `"openKey" = $2`, [write.fingerprint], endpoints, ctx, now);
        out.resolved.push(...resolved.views);
        out.queued += resolved.queued;
      }
    }
  });
  return out;
}

/** Resolves the firing alerts a condition names; delivers the resolution of those whose firing was delivered. */
async function resolveWhere(sql: SqlSession, condition: string, params: unknown[], endpoints: readonly Endpoint[], ctx: OutboxContext, now: Date) {
  const rows = await sql.query<AlertRow>(
    `UPDATE "Alert" SET "state" = 'resolved', "openKey" = NULL, "resolvedAt" = $1, "updatedAt" = $1 WHERE "state" = 'firing' AND ${condition} RETURNING *`,
    [now, ...params],
  );
  let queued = 0;
  const views = rows.map(alertView);
  for (const [i, row] of rows.entries()) if (row.notified) queued += await queueMessages(sql, endpoints, views[i]!, 'alert.resolved', ctx, now);
  return { views, queued };
}

export type SweepResult = { resolved: number; released: number; resent: number; queued: number };

/**
 * What time does to alerts, run now and then by every delivery worker (any process may):
 * event alerts past their resolveAt are resolved; alerts a silence held back are delivered
 * once it has ended, if still firing; Alertmanager endpoints get what is firing again before
 * Alertmanager would resolve it by itself.
 */
export async function sweepAlerts(store: Store, ctx: OutboxContext & { resendIntervalMs: number }): Promise<SweepResult> {
  const now = new Date(ctx.nowWall ?? systemClock.wall());
  return store.transaction(async (sql) => {
    const endpoints = await enabledEndpoints(sql);
    const result: SweepResult = { resolved: 0, released: 0, resent: 0, queued: 0 };
    const due = await resolveWhere(sql, `"resolveAt" <= $1`, [], endpoints, ctx, now);
    result.resolved = due.views.length;
    result.queued += due.queued;
    // Locked until this transaction ends: every process sweeps, and another sweep passes over
    // the alerts this one is releasing (else each would queue them: two deliveries per alert);
    // a resolution waits, then finds them notified and queues theirs.
    const held = await sql.query<AlertRow>(`SELECT * FROM "Alert" WHERE "state" = 'firing' AND NOT "notified" ORDER BY id LIMIT 500 FOR UPDATE SKIP LOCKED`);
    if (held.length > 0) {
      const silences = await activeSilences(sql, now);
      for (const row of held) {
        if (isSilenced(silences, { source: row.source, leaseId: row.leaseId, ruleType: row.ruleType as AlertRuleType }, now.getTime())) continue;
        result.queued += await queueMessages(sql, endpoints, alertView(row), 'alert.firing', ctx, now);
        await sql.query(`UPDATE "Alert" SET "notified" = true WHERE id = $1`, [row.id]);
        result.released += 1;
      }
    }
    // Alertmanager forgets an alert at its endsAt: firing ones are sent again well before.
    const stale = await sql.query<AlertRow & { webhookId: string }>(
      `SELECT a.*, w.id AS "webhookId" FROM "Alert" a JOIN "Webhook" w ON w.enabled AND w.format = 'alertmanager'
        WHERE a."state" = 'firing' AND a."notified"
          AND NOT EXISTS (SELECT 1 FROM "WebhookDelivery" d WHERE d."alertId" = a.id AND d."webhookId" = w.id AND d."createdAt" > $1)
        LIMIT 500`,
      [new Date(now.getTime() - ctx.resendIntervalMs)],
    );
    for (const row of stale) {
      const view = alertView(row);
      const rules = endpoints.find((e) => e.id === row.webhookId)?.rules ?? null;
      if (!endpointTakes({ rules }, view)) continue;
      result.queued += await queueMessages(sql, [{ id: row.webhookId, rules }], view, 'alert.firing', ctx, now, 'alert.resend');
      result.resent += 1;
    }
    return result;
  });
}

/** The open alerts of a source (an engine taking the source over adopts them). */
export async function openAlertsOf(store: Store, source: string): Promise<AlertView[]> {
  const rows = await store.withSql((sql) => sql.query<AlertRow>(`SELECT * FROM "Alert" WHERE "state" = 'firing' AND "source" = $1`, [source]));
  return rows.map(alertView);
}

export type AlertFilter = { state?: 'firing' | 'resolved'; source?: string; leaseId?: string; ruleType?: string; before?: string; limit?: number };

/** Alerts, newest first, for pages and the API. */
export async function listAlerts(store: Store, filter: AlertFilter = {}): Promise<AlertView[]> {
  const rows = await store.prisma.alert.findMany({
    where: {
      ...(filter.state ? { state: filter.state } : {}),
      ...(filter.source ? { source: filter.source } : {}),
      ...(filter.leaseId ? { leaseId: filter.leaseId } : {}),
      ...(filter.ruleType ? { ruleType: filter.ruleType } : {}),
      ...(filter.before ? { id: { lt: BigInt(filter.before) } } : {}),
    },
    orderBy: { id: 'desc' },
    take: Math.min(Math.max(filter.limit ?? 100, 1), 500),
  });
  return rows.map((row) => alertView(row as unknown as AlertRow));
}

export async function getAlert(store: Store, id: string): Promise<AlertView | null> {
  if (!/^\d{1,19}$/.test(id)) return null;
  const row = await store.prisma.alert.findUnique({ where: { id: BigInt(id) } });
  return row ? alertView(row as unknown as AlertRow) : null;
}

/** Resolves every open alert of a rule (the rule was deleted or disabled). */
export async function resolveAlertsOfRule(store: Store, ruleId: string, ctx: OutboxContext): Promise<number> {
  const now = new Date(ctx.nowWall ?? systemClock.wall());
  return store.transaction(async (sql) => {
    const resolved = await resolveWhere(sql, `"ruleId" = $2`, [ruleId], await enabledEndpoints(sql), ctx, now);
    return resolved.views.length;
  });
}

/**
 * Queues one test message to one endpoint and returns its delivery's id: the request that asked
 * for it claims and sends it at once (lib/alerts/manage.ts), and the delivery log keeps it.
 */
export function queueTestMessage(store: Store, webhookId: string, view: AlertView, ctx: OutboxContext, now: Date): Promise<string> {
  return store.transaction(async (sql) => {
    await queueMessages(sql, [{ id: webhookId, rules: [] }], view, 'alert.test', ctx, now);
    const [row] = await sql.query<{ id: string }>(`SELECT id::text AS id FROM "WebhookDelivery" WHERE "webhookId" = $1 AND "event" = 'alert.test' ORDER BY id DESC LIMIT 1`, [webhookId]);
    return row!.id;
  });
}
