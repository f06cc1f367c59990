// The outbox's workers' side: claim due deliveries (FOR UPDATE SKIP LOCKED, so that several
// processes never claim one row twice), record each attempt's outcome, dead-letter after the
// last, replay on request. Times are the database's (now()), the one clock every process shares.
import type { AlertMessage } from '../domain/alert-types';
import { processKeyring, SecretUnreadableError } from './secret-box';
import type { SqlSession } from './sql';
import { openedSecrets } from './webhooks';
import type { Store } from './store';
import type { DeliveryView } from '../domain/schemas/alerts';

/** A claimed delivery, with what is needed to send it. */
export type ClaimedDelivery = {
  id: string;
  messageId: string;
  webhookId: string;
  event: string;
  payload: AlertMessage;
  attempts: number;
  /** Its endpoint, its secrets and routing key opened; `unreadable`: why they could not be (then there are none). */
  webhook: { name: string; url: string; format: string; secrets: string[]; routingKey: string | null; unreadable: string | null };
};

export type DeliveryStatus = DeliveryView['status'];

/** A delivery as the API shows it: lib/domain/schemas/alerts.ts. */
export type { DeliveryView };

type ClaimRow = {
  id: string | bigint;
  messageId: string;
  webhookId: string;
  event: string;
  payload: AlertMessage | string;
  attempts: number;
  name: string;
  url: string;
  format: string;
  secrets: string[] | null;
  routingKey: string | null;
};

/**
 * Claims up to `limit` due deliveries for `workerId`, for `claimMs`: pending, due, of an enabled
 * endpoint, and not claimed by a live worker (a claim that ran out belonged to a worker that
 * died mid-send: its delivery is sent again, under the same webhook-id). Each claim counts as an attempt.
 */
export async function claimDeliveries(store: Store, workerId: string, limit: number, claimMs: number): Promise<ClaimedDelivery[]> {
  const rows = await store.transaction((sql) =>
    sql.query<ClaimRow>(
      `WITH due AS (
         SELECT d.id FROM "WebhookDelivery" d JOIN "Webhook" w ON w.id = d."webhookId" AND w.enabled
          WHERE d."status" = 'pending' AND d."nextAttemptAt" <= now() AND (d."claimedUntil" IS NULL OR d."claimedUntil" < now())
          ORDER BY d."nextAttemptAt", d.id
          LIMIT $2
          FOR UPDATE OF d SKIP LOCKED
       ), claimed AS (
         UPDATE "WebhookDelivery" d SET "claimedBy" = $1, "claimedUntil" = now() + ($3 * interval '1 millisecond'), "attempts" = d."attempts" + 1
           FROM due WHERE d.id = due.id
         RETURNING d.*
       )
       SELECT c.id, c."messageId", c."webhookId", c."event", c."payload", c."attempts", w.name, w.url, w.format, w.secrets, w."routingKey"
         FROM claimed c JOIN "Webhook" w ON w.id = c."webhookId"`,
      [workerId, limit, claimMs],
    ),
  );
  return rows.map(claimedOf);
}

function claimedOf(row: ClaimRow): ClaimedDelivery {
  return {
    id: String(row.id),
    messageId: row.messageId,
    webhookId: row.webhookId,
    event: row.event,
    payload: (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload) as AlertMessage,
    attempts: row.attempts,
    webhook: { name: row.name, url: row.url, format: row.format, ...openedFor(row) },
  };
}

/** The endpoint's secrets as given; none, and why, when this process cannot open them (the attempt fails with that reason). */
function openedFor(row: ClaimRow): { secrets: string[]; routingKey: string | null; unreadable: string | null } {
  try {
    return { ...openedSecrets(processKeyring(), { id: row.webhookId, secrets: row.secrets, routingKey: row.routingKey }), unreadable: null };
  } catch (error) {
    if (!(error instanceof SecretUnreadableError)) throw error;
    return { secrets: [], routingKey: null, unreadable: `the endpoint's secrets cannot be read: ${error.message}` };
  }
}

/** Claims one delivery by id (a test message sent by the request that made it); null when it is not pending or is claimed. */
export async function claimDelivery(store: Store, id: string, workerId: string, claimMs: number): Promise<ClaimedDelivery | null> {
  const rows = await store.transaction((sql) =>
    sql.query<ClaimRow>(
      `WITH claimed AS (
         UPDATE "WebhookDelivery" d SET "claimedBy" = $1, "claimedUntil" = now() + ($3 * interval '1 millisecond'), "attempts" = d."attempts" + 1
          WHERE d.id = $2::bigint AND d."status" = 'pending' AND (d."claimedUntil" IS NULL OR d."claimedUntil" < now())
         RETURNING d.*
       )
       SELECT c.id, c."messageId", c."webhookId", c."event", c."payload", c."attempts", w.name, w.url, w.format, w.secrets, w."routingKey"
         FROM claimed c JOIN "Webhook" w ON w.id = c."webhookId"`,
      [workerId, id, claimMs],
    ),
  );
  return rows.length === 1 ? claimedOf(rows[0]!) : null;
}

export type AttemptOutcome =
  | { kind: 'delivered'; status: number; latencyMs: number }
  /** Tried again after retryInMs, or dead-lettered when `last`. */
  | { kind: 'failed'; status: number | null; latencyMs: number | null; error: string; retryInMs: number; last: boolean }
  /** 410 Gone: the endpoint is disabled, this delivery dead-lettered. */
  | { kind: 'gone'; status: number; latencyMs: number; error: string };

/** Records an attempt's outcome, if `workerId` still holds the claim (else another worker has taken it over). */
export async function completeDelivery(store: Store, id: string, workerId: string, outcome: AttemptOutcome): Promise<boolean> {
  return store.transaction(async (sql) => {
    const rows = await recordOutcome(sql, id, workerId, outcome);
    if (rows.length === 1 && outcome.kind === 'gone') {
      await sql.query(`UPDATE "Webhook" SET "enabled" = false, "disabledReason" = $2, "updatedAt" = now() WHERE id = $1`, [rows[0]!.webhookId, outcome.error]);
    }
    return rows.length === 1;
  });
}

function recordOutcome(sql: SqlSession, id: string, workerId: string, outcome: AttemptOutcome) {
  const release = `"claimedBy" = NULL, "claimedUntil" = NULL`;
  const mine = `id = $1::bigint AND "claimedBy" = $2 AND "status" = 'pending'`;
  switch (outcome.kind) {
    case 'delivered':
      return sql.query<{ webhookId: string }>(
        `UPDATE "WebhookDelivery" SET "status" = 'delivered', "deliveredAt" = now(), "lastStatusCode" = $3, "lastLatencyMs" = $4, "lastError" = NULL, ${release} WHERE ${mine} RETURNING "webhookId"`,
        [id, workerId, outcome.status, Math.round(outcome.latencyMs)],
      );
    case 'failed':
      return sql.query<{ webhookId: string }>(
        `UPDATE "WebhookDelivery" SET "status" = CASE WHEN $6::boolean THEN 'dead'::"DeliveryStatus" ELSE 'pending'::"DeliveryStatus" END,
                "nextAttemptAt" = CASE WHEN $6::boolean THEN now() ELSE now() + ($7 * interval '1 millisecond') END,
                "lastStatusCode" = $3, "lastLatencyMs" = $4, "lastError" = $5, ${release}
          WHERE ${mine} RETURNING "webhookId"`,
        [id, workerId, outcome.status, outcome.latencyMs === null ? null : Math.round(outcome.latencyMs), outcome.error.slice(0, 500), outcome.last, Math.round(outcome.retryInMs)],
      );
    case 'gone':
      return sql.query<{ webhookId: string }>(
        `UPDATE "WebhookDelivery" SET "status" = 'dead', "lastStatusCode" = $3, "lastLatencyMs" = $4, "lastError" = $5, ${release} WHERE ${mine} RETURNING "webhookId"`,
        [id, workerId, outcome.status, Math.round(outcome.latencyMs), outcome.error.slice(0, 500)],
      );
  }
}

type DeliveryRow = {
  id: bigint;
  messageId: string;
  webhookId: string;
  alertId: bigint | null;
  event: string;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: Date | null;
  lastStatusCode: number | null;
  lastError: string | null;
  lastLatencyMs: number | null;
  createdAt: Date;
  deliveredAt: Date | null;
  payload: unknown;
};

function deliveryView(row: DeliveryRow): DeliveryView {
  const payload = row.payload as Partial<AlertMessage> | null;
  return {
    id: String(row.id),
    messageId: row.messageId,
    webhookId: row.webhookId,
    alertId: row.alertId === null ? null : String(row.alertId),
    event: row.event,
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: row.status === 'pending' && row.nextAttemptAt ? row.nextAttemptAt.toISOString() : null,
    lastStatusCode: row.lastStatusCode,
    lastError: row.lastError,
    lastLatencyMs: row.lastLatencyMs,
    createdAt: row.createdAt.toISOString(),
    deliveredAt: row.deliveredAt?.toISOString() ?? null,
    summary: typeof payload?.alert?.summary === 'string' ? payload.alert.summary : null,
  };
}

/** Deliveries, newest first: of one endpoint, of one alert, or all. */
export async function listDeliveries(store: Store, filter: { webhookId?: string; alertId?: string; status?: DeliveryStatus; limit?: number } = {}): Promise<DeliveryView[]> {
  const rows = await store.prisma.webhookDelivery.findMany({
    where: {
      ...(filter.webhookId ? { webhookId: filter.webhookId } : {}),
      ...(filter.alertId && /^\d{1,19}$/.test(filter.alertId) ? { alertId: BigInt(filter.alertId) } : {}),
      ...(filter.status ? { status: filter.status } : {}),
    },
    orderBy: { id: 'desc' },
    take: Math.min(Math.max(filter.limit ?? 50, 1), 500),
  });
  return rows.map((row) => deliveryView(row as unknown as DeliveryRow));
}

/** One delivery of an alert, with the name of the endpoint it went to. */
export type AlertDelivery = Omit<DeliveryView, 'messageId' | 'alertId' | 'summary'> & { webhookName: string };

/** Deliveries shown per alert on /alerts, the newest first. */
export const DELIVERIES_PER_ALERT = 10;

type AlertDeliveryRow = Omit<DeliveryRow, 'messageId' | 'payload'> & { webhookName: string | null; total: string | number };

/**
 * Each alert's deliveries (the newest DELIVERIES_PER_ALERT, without their payloads) and how
 * many it has in all, by alert id, in one query.
 */
export async function deliveriesOfAlerts(store: Store, alertIds: readonly string[]): Promise<Map<string, { deliveries: AlertDelivery[]; total: number }>> {
  const ids = alertIds.filter((id) => /^\d{1,19}$/.test(id) && BigInt(id) < 2n ** 63n);
  const result = new Map<string, { deliveries: AlertDelivery[]; total: number }>();
  if (ids.length === 0) return result;
  const rows = await store.withSql((sql) =>
    sql.query<AlertDeliveryRow>(
      `SELECT d.id, d."webhookId", w.name AS "webhookName", d."alertId", d.event, d.status, d.attempts, d."nextAttemptAt", d."lastStatusCode", d."lastError", d."lastLatencyMs", d."createdAt", d."deliveredAt", d.total
         FROM (SELECT *, row_number() OVER (PARTITION BY "alertId" ORDER BY id DESC) AS n, count(*) OVER (PARTITION BY "alertId") AS total
                 FROM "WebhookDelivery" WHERE "alertId" = ANY($1::bigint[])) d
         LEFT JOIN "Webhook" w ON w.id = d."webhookId"
        WHERE d.n <= $2
        ORDER BY d."alertId", d.id DESC`,
      [ids, DELIVERIES_PER_ALERT],
    ),
  );
  for (const row of rows) {
    const alertId = String(row.alertId);
    const { messageId: _m, alertId: _a, summary: _s, ...view } = deliveryView({ ...row, messageId: '', payload: null, createdAt: new Date(row.createdAt), nextAttemptAt: row.nextAttemptAt && new Date(row.nextAttemptAt), deliveredAt: row.deliveredAt && new Date(row.deliveredAt) });
    const entry = result.get(alertId) ?? { deliveries: [], total: Number(row.total) };
    entry.deliveries.push({ ...view, webhookName: row.webhookName ?? '(deleted endpoint)' });
    result.set(alertId, entry);
  }
  return result;
}

/** Puts an endpoint's dead deliveries (or one of them) back in the queue, due now, their attempts counted from zero; how many. */
export async function replayDeadDeliveries(store: Store, webhookId: string, id: string | null): Promise<number> {
  if (id !== null && !/^\d{1,19}$/.test(id)) return 0;
  const rows = await store.withSql((sql) =>
    sql.query(
      `UPDATE "WebhookDelivery" SET "status" = 'pending', "attempts" = 0, "nextAttemptAt" = now(), "claimedBy" = NULL, "claimedUntil" = NULL
        WHERE "webhookId" = $1 AND "status" = 'dead' AND ($2::bigint IS NULL OR id = $2::bigint) RETURNING id`,
      [webhookId, id],
    ),
  );
  return rows.length;
}

/** How many deliveries wait, and how many are dead, per endpoint. */
export async function deliveryCounts(store: Store): Promise<Map<string, { pending: number; dead: number; delivered: number }>> {
  const rows = await store.withSql((sql) =>
    sql.query<{ webhookId: string; status: DeliveryStatus; count: string | number }>(`SELECT "webhookId", "status", count(*) AS count FROM "WebhookDelivery" GROUP BY 1, 2`),
  );
  const counts = new Map<string, { pending: number; dead: number; delivered: number }>();
  for (const row of rows) {
    const entry = counts.get(row.webhookId) ?? { pending: 0, dead: 0, delivered: 0 };
    entry[row.status] = Number(row.count);
    counts.set(row.webhookId, entry);
  }
  return counts;
}
