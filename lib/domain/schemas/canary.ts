// A source's canary lease as GET /api/v1/sources shows it (docs/api.md "Canary"): its settings,
// what each call cost over the last minute, hour and day, and its renewals minute by minute
// over the last hour (lib/queries/canary.ts). Pure.
import { z } from 'zod';

const ms = z.number().nullable();

/** Round trips of one call over one window: counted, failures among them, percentiles and the largest (null when none). */
export const canaryWindowSchema = z.object({ count: z.number(), failed: z.number(), p50Ms: ms, p95Ms: ms, p99Ms: ms, maxMs: ms });

/** The last minute (the current minute and the one before it), the last hour and the last day. */
export const canaryWindowsSchema = z.object({ minute: canaryWindowSchema, hour: canaryWindowSchema, day: canaryWindowSchema });

export const canaryViewSchema = z.object({
  /** The key it holds, as configured. */
  key: z.string(),
  ttlMs: z.number(),
  everyMs: z.number(),
  calls: z.object({ acquire: canaryWindowsSchema, renew: canaryWindowsSchema, release: canaryWindowsSchema }),
  /** Its renewals per minute over the last hour, oldest first (minutes without any left out). */
  minutes: z.array(z.object({ minute: z.string(), count: z.number(), failed: z.number(), p50Ms: ms, p99Ms: ms, maxMs: ms })),
});

export type CanaryView = z.infer<typeof canaryViewSchema>;
export type CanaryWindow = z.infer<typeof canaryWindowSchema>;
