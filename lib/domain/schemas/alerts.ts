// Alerts, their deliveries, rules and silences as the API shows them (GET /api/v1/alerts,
// /alert-rules, /silences; docs/alerts.md#api). AlertView (alert-types.ts), DeliveryView
// (lib/db/deliveries.ts), AlertRuleView (lib/db/alert-rules.ts) and SilenceView
// (lib/db/silences.ts) are inferred from here.
import { z } from 'zod';
import { ALERT_RULE_TYPES, ALERT_SEVERITIES } from '../alert-types';
import { isoTime, tokenText } from './lease';

export const alertViewSchema = z.object({
  id: z.string(),
  /** Stable from firing to resolved: one open alert per rule and subject. 32 hex characters. */
  fingerprint: z.string(),
  rule: z.object({ id: z.string(), name: z.string(), type: z.enum(ALERT_RULE_TYPES) }),
  severity: z.enum(ALERT_SEVERITIES),
  status: z.enum(['firing', 'resolved']),
  source: z.string(),
  /** The lease the alert is about; null for source_down. */
  leaseId: z.string().nullable(),
  leaseKey: z.string().nullable(),
  holder: z.string().nullable(),
  previousHolder: z.string().nullable(),
  /** Fencing tokens as decimal strings (they may exceed 2^53). */
  token: tokenText.nullable(),
  previousToken: tokenText.nullable(),
  ttlMs: z.number().nullable(),
  /** Time that was left at the last renewal (late_renewal), or null. */
  marginMs: z.number().nullable(),
  /** Time without a holder in a failover, or null. */
  gapMs: z.number().nullable(),
  /** One line for a human: what happened, to what. */
  summary: z.string(),
  startsAt: isoTime,
  endsAt: isoTime.nullable(),
  /** Times the condition was seen again while the alert was open. */
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

/**
 * A rule as stored (GET, POST /api/v1/alert-rules; PATCH /api/v1/alert-rules/{id}). Its type,
 * severity and scope are the row's text: a row edited by hand into a shape Leasehold cannot
 * read is shown as it is, with its problem.
 */
export const alertRuleViewSchema = z.object({
  id: z.string(),
  name: z.string(),
  type: z.string(),
  severity: z.string(),
  scope: z.string(),
  params: z.record(z.string(), z.unknown()),
  enabled: z.boolean(),
  builtIn: z.boolean(),
  createdAt: isoTime,
  updatedAt: isoTime,
  /** Why the row cannot be evaluated, or null. */
  problem: z.string().nullable(),
});

/** GET /api/v1/alert-rules */
export const alertRulesSchema = z.object({ rules: z.array(alertRuleViewSchema) });

/** A silence (POST /api/v1/silences, 201; DELETE /api/v1/silences/{id}: as it is once ended). */
export const silenceViewSchema = z.object({
  id: z.string(),
  scope: z.string(),
  ruleType: z.string().nullable(),
  startsAt: isoTime,
  endsAt: isoTime,
  reason: z.string(),
  author: z.string(),
  createdAt: isoTime,
  /** In force now. */
  active: z.boolean(),
});

/** GET /api/v1/silences: in force, to come, or ended within a day. */
export const silencesSchema = z.object({ silences: z.array(silenceViewSchema) });

export type AlertView = z.infer<typeof alertViewSchema>;
export type DeliveryView = z.infer<typeof deliveryViewSchema>;
export type AlertRuleView = z.infer<typeof alertRuleViewSchema>;
export type SilenceView = z.infer<typeof silenceViewSchema>;
