// Alerts and their deliveries as the API shows them (GET /api/v1/alerts; docs/alerts.md#api).
// DeliveryView (lib/db/deliveries.ts) is inferred from here; AlertView (alert-types.ts) is still
// written by hand while the alert rules are restructured, and held to this schema by the routes
// that answer with it (lib/api/reply.ts) and by the type check at the end of this file.
import { z } from 'zod';
import { ALERT_RULE_TYPES, ALERT_SEVERITIES, type AlertView } from '../alert-types';
import { isoTime, tokenText } from './lease';

export const alertViewSchema = z.object({
  id: z.string(),
  /** Stable from firing to resolved: one open alert per rule and subject. 32 hex characters. */
  fingerprint: z.string(),
  rule: z.object({ id: z.string(), name: z.string(), type: z.enum(ALERT_RULE_TYPES) }),
  severity: z.enum(ALERT_SEVERITIES),
  status: z.enum(['firing', 'resolved']),
  source: z.string(),
  leaseId: z.string().nullable(),
  leaseKey: z.string().nullable(),
  holder: z.string().nullable(),
  previousHolder: z.string().nullable(),
  token: tokenText.nullable(),
  previousToken: tokenText.nullable(),
  ttlMs: z.number().nullable(),
  marginMs: z.number().nullable(),
  gapMs: z.number().nullable(),
  summary: z.string(),
  startsAt: isoTime,
  endsAt: isoTime.nullable(),
  occurrences: z.number(),
  detail: z.record(z.string(), z.unknown()).nullable(),
});

/** GET /api/v1/alerts */
export const alertsPageSchema = z.object({ alerts: z.array(alertViewSchema), nextCursor: z.string().nullable() });

export const DELIVERY_STATUSES = ['pending', 'delivered', 'dead'] as const;

/** One delivery of an alert to an endpoint (the outbox row), as the API shows it. */
export const deliveryViewSchema = z.object({
  id: z.string(),
  messageId: z.string(),
  webhookId: z.string(),
  alertId: z.string().nullable(),
  event: z.string(),
  status: z.enum(DELIVERY_STATUSES),
  attempts: z.number(),
  nextAttemptAt: isoTime.nullable(),
  lastStatusCode: z.number().nullable(),
  lastError: z.string().nullable(),
  lastLatencyMs: z.number().nullable(),
  createdAt: isoTime,
  deliveredAt: isoTime.nullable(),
  summary: z.string().nullable(),
});

export type AlertViewShape = z.infer<typeof alertViewSchema>;
export type DeliveryView = z.infer<typeof deliveryViewSchema>;

// The hand-written AlertView and the schema agree (a compile error here when one changes alone).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _alertViewIsTheSchema: Same<AlertView, AlertViewShape> = true;
void _alertViewIsTheSchema;
