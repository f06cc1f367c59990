// Webhook endpoints as the API shows them (every /api/v1/webhooks route; docs/alerts.md#api):
// never a secret or routing key (but a new secret, once), the URL without what may be a
// credential. WebhookView (lib/db/webhooks.ts) is inferred from here.
import { z } from 'zod';
import { deliveryViewSchema } from './alerts';
import { isoTime } from './lease';

export const webhookViewSchema = z.object({
  id: z.string(),
  name: z.string(),
  /** Scheme, host, port and the first path segment (lib/db/webhooks.ts shownWebhookUrl). */
  url: z.string(),
  format: z.string(),
  /** Rule types or rule ids it receives; empty: all. */
  rules: z.array(z.string()),
  enabled: z.boolean(),
  disabledReason: z.string().nullable(),
  /** Two secrets sign while one is being rotated. */
  secrets: z.number(),
  hasRoutingKey: z.boolean(),
  createdAt: isoTime,
  updatedAt: isoTime,
});

export const deliveryCountsSchema = z.object({ pending: z.number(), dead: z.number(), delivered: z.number() });

/** GET /api/v1/webhooks: each endpoint with its deliveries waiting, dead and delivered. */
export const webhookListSchema = z.object({ webhooks: z.array(webhookViewSchema.extend({ deliveries: deliveryCountsSchema })) });

/** POST /api/v1/webhooks, 201: the endpoint and its signing secret, shown this once. */
export const newWebhookSchema = z.object({ webhook: webhookViewSchema, secret: z.string() });

/** PATCH /api/v1/webhooks/{id}: the endpoint, and the new secret when one was rotated in (this once). */
export const changedWebhookSchema = z.object({ webhook: webhookViewSchema, secret: z.string().optional() });

/** GET /api/v1/webhooks/{id}: the endpoint and its last 100 deliveries, newest first. */
export const webhookDetailSchema = z.object({ webhook: webhookViewSchema, deliveries: z.array(deliveryViewSchema) });

/** POST /api/v1/webhooks/{id}/test: how the test message sent now went. */
export const webhookTestSchema = z.object({
  deliveryId: z.string(),
  outcome: z.string(),
  status: z.number().nullable(),
  latencyMs: z.number().nullable(),
  error: z.string().nullable(),
});

/** POST /api/v1/webhooks/{id}/replay: how many dead deliveries were queued again. */
export const replayedSchema = z.object({ replayed: z.number() });

export type WebhookView = z.infer<typeof webhookViewSchema>;
export type DeliveryCounts = z.infer<typeof deliveryCountsSchema>;
export type WebhookTest = z.infer<typeof webhookTestSchema>;
