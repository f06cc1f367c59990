// The embedded demo's answers (docs/api.md "GET, POST /api/v1/demo"; the demo's inbox).
import { z } from 'zod';
import { isoTime } from './lease';

const weekAndTotal = z.object({ week: z.number(), total: z.number() });

export const demoStatusSchema = z.object({
  faults: z.boolean(),
  /** How many servers the fleet has (some may not have started yet, or be down). */
  fleetSize: z.number(),
  servers: z.array(z.object({ name: z.string(), state: z.enum(['running', 'paused', 'crashed']), leader: z.boolean() })),
  recentFaults: z.array(z.object({ at: isoTime, server: z.string(), kind: z.enum(['pause', 'crash', 'restart']), detail: z.string() })),
  digest: z.object({
    users: z.number(),
    week: z.number(),
    sentThisWeek: z.number(),
    deliveredThisWeek: z.number(),
    weekStartedAt: isoTime.nullable(),
    weekCompletedAt: isoTime.nullable(),
    weeksCompleted: z.number(),
    redeliveriesAbsorbed: weekAndTotal,
    staleWritesRejected: weekAndTotal,
    duplicatesDelivered: z.number(),
  }),
});

/** GET and POST /api/v1/demo */
export const demoSchema = z.discriminatedUnion('running', [z.object({ running: z.literal(false) }), demoStatusSchema.extend({ running: z.literal(true) })]);

/** One message the demo's receiver took (lib/alerts/demo-inbox.ts). */
export const inboxMessageSchema = z.object({
  id: z.string(),
  receivedAt: isoTime,
  /** The signature checked out with the endpoint's secret, and the timestamp was recent. */
  verified: z.boolean(),
  problem: z.string().nullable(),
  type: z.string().nullable(),
  rule: z.string().nullable(),
  severity: z.string().nullable(),
  summary: z.string().nullable(),
  leaseId: z.string().nullable(),
  /** From the alert's start to its arrival here, for a firing message. */
  delayMs: z.number().nullable(),
});

/** GET /api/v1/demo/inbox: what the demo's receiver took, newest first. */
export const demoInboxSchema = z.object({ messages: z.array(inboxMessageSchema) });

export type DemoStatus = z.infer<typeof demoStatusSchema>;
export type InboxMessage = z.infer<typeof inboxMessageSchema>;
