// The /alerts page's read model: what fires now (the most severe first), the resolved ones
// newest first and paged by cursor, the rules and the silences, for every reader; for admins
// also the webhook endpoints with their delivery counts and last deliveries, and each shown
// alert's deliveries. Every table is read through lib/db.
import 'server-only';
import type { Store } from '../db';
import { listAlerts, silenceOf } from '../db/alerts';
import { listRuleViews, type AlertRuleView } from '../db/alert-rules';
import { deliveriesOfAlerts, deliveryCounts, listDeliveries, type AlertDelivery, type DeliveryView } from '../db/deliveries';
import { listSilences, type SilenceView } from '../db/silences';
import { listWebhooks, type WebhookView } from '../db/webhooks';
import type { AlertRuleType, AlertView } from '../domain/alert-types';
import type { DeliveryCounts } from '../domain/schemas/webhooks';
import { isSilenced } from '../domain/silences';
import { systemClock } from '../time/clock';

/** Firing alerts shown at most (the API's own largest page). */
export const FIRING_LIMIT = 500;
/** Resolved alerts per page of the history. */
export const HISTORY_PAGE = 50;
/** Deliveries shown in each endpoint's log. */
export const DELIVERY_LOG_LIMIT = 20;

const MAX_ID = 2n ** 63n - 1n;

/** A history cursor from the URL: an alert id (a positive bigint), else none. */
export function historyCursor(text: string | undefined): string | undefined {
  if (!text || !/^\d{1,19}$/.test(text)) return undefined;
  const id = BigInt(text);
  return id > 0n && id <= MAX_ID ? id.toString() : undefined;
}

/** An alert's deliveries (the newest few) and how many it has in all; shown to whoever may manage alerts. */
export type AlertDeliveries = { deliveries: AlertDelivery[]; total: number };

export type FiringAlert = AlertView & {
  /** A silence in force covers it now: it is recorded, not delivered. */
  silenced: boolean;
};

export type SilenceState = 'in force' | 'to come' | 'ended';
export type SilenceRow = SilenceView & { state: SilenceState };

export type { DeliveryCounts };
export type EndpointRow = WebhookView & { deliveries: DeliveryCounts; log: DeliveryView[] };

export type AlertsPageData = {
  firing: FiringAlert[];
  /** More alerts fire than FIRING_LIMIT: the oldest are not shown. */
  firingCapped: boolean;
  /** Resolved alerts, newest first. */
  history: AlertView[];
  /** The cursor of the next (older) page of the history, or null on the last. */
  olderCursor: string | null;
  rules: AlertRuleView[];
  /** Rules that are on and can be evaluated. */
  rulesOn: number;
  silences: SilenceRow[];
  /** Null for whoever may not manage alerts: they see no endpoint. */
  endpoints: EndpointRow[] | null;
  /** Each shown alert's deliveries by alert id; null for whoever may not manage alerts. */
  deliveries: Record<string, AlertDeliveries> | null;
};

const SEVERITY_ORDER: Record<string, number> = { critical: 0, warning: 1, info: 2 };

/** Firing alerts, the most severe first and then the newest, each with whether a silence holds it back now. */
export async function listFiringAlerts(store: Store, silences?: readonly SilenceView[], nowWall = systemClock.wall()): Promise<{ firing: FiringAlert[]; capped: boolean }> {
  const [alerts, known] = await Promise.all([listAlerts(store, { state: 'firing', limit: FIRING_LIMIT }), silences ?? listSilences(store)]);
  const inForce = known.map(silenceOf).filter((s) => s !== null);
  const firing = alerts
    .map((alert) => ({ ...alert, silenced: isSilenced(inForce, { source: alert.source, leaseId: alert.leaseId, ruleType: alert.rule.type as AlertRuleType }, nowWall) }))
    .sort((a, b) => (SEVERITY_ORDER[a.severity] ?? 3) - (SEVERITY_ORDER[b.severity] ?? 3) || Number(BigInt(b.id) - BigInt(a.id)));
  return { firing, capped: alerts.length === FIRING_LIMIT };
}

function silenceState(silence: SilenceView, nowWall: number): SilenceState {
  if (Date.parse(silence.endsAt) <= nowWall) return 'ended';
  return Date.parse(silence.startsAt) > nowWall ? 'to come' : 'in force';
}

const STATE_ORDER: Record<SilenceState, number> = { 'in force': 0, 'to come': 1, ended: 2 };

/** Endpoints by name, with their delivery counts and last deliveries. */
export async function listEndpoints(store: Store): Promise<EndpointRow[]> {
  const [webhooks, counts] = await Promise.all([listWebhooks(store), deliveryCounts(store)]);
  const logs = await Promise.all(webhooks.map((webhook) => listDeliveries(store, { webhookId: webhook.id, limit: DELIVERY_LOG_LIMIT })));
  return webhooks.map((webhook, i) => ({ ...webhook, deliveries: counts.get(webhook.id) ?? { pending: 0, dead: 0, delivered: 0 }, log: logs[i]! }));
}

/** Everything the page shows; `manage`: the reader may manage alerts (and sees the endpoints). */
export async function alertsPage(store: Store, options: { cursor?: string; manage: boolean; nowWall?: number }): Promise<AlertsPageData> {
  const nowWall = options.nowWall ?? systemClock.wall();
  const [silences, rules, resolved, endpoints] = await Promise.all([
    listSilences(store),
    listRuleViews(store),
    listAlerts(store, { state: 'resolved', before: options.cursor, limit: HISTORY_PAGE + 1 }),
    options.manage ? listEndpoints(store) : null,
  ]);
  const { firing, capped } = await listFiringAlerts(store, silences, nowWall);
  const history = resolved.slice(0, HISTORY_PAGE);
  const deliveries = options.manage ? Object.fromEntries(await deliveriesOfAlerts(store, [...firing, ...history].map((alert) => alert.id))) : null;
  return {
    firing,
    firingCapped: capped,
    history,
    olderCursor: resolved.length > HISTORY_PAGE ? history.at(-1)!.id : null,
    rules,
    rulesOn: rules.filter((rule) => rule.enabled && rule.problem === null).length,
    silences: silences
      .map((silence) => ({ ...silence, state: silenceState(silence, nowWall) }))
      .sort((a, b) => STATE_ORDER[a.state] - STATE_ORDER[b.state] || (a.state === 'ended' ? -1 : 1) * (Date.parse(a.endsAt) - Date.parse(b.endsAt))),
    endpoints,
    deliveries,
  };
}
