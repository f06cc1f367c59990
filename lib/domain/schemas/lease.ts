// The shapes the API and the live stream send about leases (docs/api.md "Objects"), as zod
// schemas: one place, the types inferred from them (lib/domain/types.ts re-exports LeaseView,
// LeaseEventView and Candidate). Pure: zod and lib/domain's vocabulary only, so the browser
// imports it too (components/live/api.ts checks what it fetches against it).
import { z } from 'zod';
import { FAILOVER_CAUSES } from '../failover-stats';
import { BACKEND_NAME, EVENT_TYPES, LEASE_KINDS, LEASE_STATES } from '../types';
import { sourcePanelSchema } from './source-panel';
import { canaryViewSchema } from './canary';

const text = z.string();
/** An ISO 8601 time in UTC, as the API writes them (Date.prototype.toISOString). */
export const isoTime = z.string();
/** A fencing token: a decimal string (it may exceed 2^53). */
export const tokenText = z.string();
const durationMs = z.number();

export const candidateSchema = z.object({ holder: text, token: tokenText.nullable() });

/** A lease (docs/api.md "Lease"): made by lib/domain/lease-view.ts toLeaseView. */
export const leaseViewSchema = z.object({
  id: text,
  source: text,
  backend: z.string().regex(BACKEND_NAME),
  kind: z.enum(LEASE_KINDS),
  key: text,
  state: z.enum(LEASE_STATES),
  holder: text.nullable(),
  /** Who held it last, when it is not held now. */
  lastHolder: text.nullable(),
  token: tokenText.nullable(),
  fenced: z.boolean(),
  ttlMs: durationMs.nullable(),
  remainingMs: durationMs.nullable(),
  acquiredAt: isoTime.nullable(),
  renewedAt: isoTime.nullable(),
  expiresAt: isoTime.nullable(),
  observedAt: isoTime,
  stale: z.boolean(),
  candidates: z.array(candidateSchema),
  transitions: z.number(),
  /** Changes of hands in the last hour (recent-changes.ts); null when not counted (live updates). */
  recentTransitions: z.number().nullable(),
  /** The current grant's last renewal: interval since the one before, and time left before it (null before the first renewal). */
  lastIntervalMs: durationMs.nullable(),
  lastMarginMs: durationMs.nullable(),
  /** Why the state is unknown (a value Leasehold cannot interpret), or null. */
  problem: text.nullable(),
  /** Backend-specific facts, display-safe: advisory lock pid and client, Redlock instances... */
  detail: z.record(z.string(), z.unknown()).nullable(),
});

/** An event of a lease (docs/api.md "Event"): made by lib/domain/event-view.ts toEventView. */
export const leaseEventViewSchema = z.object({
  id: text,
  leaseId: text,
  type: z.enum(EVENT_TYPES),
  at: isoTime,
  holder: text.nullable(),
  previousHolder: text.nullable(),
  token: tokenText.nullable(),
  previousToken: tokenText.nullable(),
  gapMs: durationMs.nullable(),
  detail: z.unknown(),
});

/** A change of hands (GET /api/v1/failovers): the event, its cause, and whether the same node came back. */
export const failoverViewSchema = leaseEventViewSchema.extend({
  cause: z.enum(FAILOVER_CAUSES),
  /** The same node under a new instance (health.ts isRestart), not another node. */
  restart: z.boolean(),
  /** The lease's kind (the failovers page filters by it). */
  kind: z.enum(LEASE_KINDS),
});

export const SOURCE_STATUSES = ['up', 'down', 'unknown'] as const;

/** A source's status as the live stream sends it (a `source` message). */
export const sourceStatusSchema = z.object({
  name: text,
  backend: text,
  status: z.enum(SOURCE_STATUSES),
  lastGoodReadAt: isoTime.nullable(),
  lastError: text.nullable(),
  lastPollMs: z.number().nullable(),
  /** Absent when the process does not know it. */
  downSince: isoTime.nullable().optional(),
});

/** A source (docs/api.md "Source"), as GET /api/v1/sources and the lease list send it. */
export const sourceViewSchema = z.object({
  name: text,
  backend: text,
  /** How a person names its backend ("PostgreSQL", "Redis, Redlock over 3 instances"): from the kind's descriptor. */
  title: text,
  /** Where it points, without credentials. */
  target: text,
  status: z.enum(SOURCE_STATUSES),
  lastGoodReadAt: isoTime.nullable(),
  /** While down: when it was found down (its last source_down event), else null. */
  downSince: isoTime.nullable(),
  lastError: text.nullable(),
  lastPollMs: z.number().nullable(),
  pollMs: z.number().nullable(),
  leases: z.number(),
  /** The collector observing it. */
  collector: text.nullable(),
  /** What the source reports about the backend itself (etcd cluster, Redlock instances). */
  detail: z.record(z.string(), z.unknown()).nullable(),
  /** The same as the sources page shows it, shaped by the backend's descriptor (source-panel.ts); null when it reported nothing. */
  panel: sourcePanelSchema.nullable(),
  configured: z.boolean(),
  /** Its canary lease (GET /api/v1/sources only): null when it has none; absent where the answer leaves it out (the lease list). */
  canary: canaryViewSchema.nullable().optional(),
});

export const renewalSampleSchema = z.object({
  seq: text,
  at: isoTime,
  holder: text.nullable(),
  intervalMs: durationMs,
  marginMs: durationMs,
  ttlMs: durationMs.nullable(),
  marginPercent: z.number().nullable(),
});

export const renewalRollupSchema = z.object({
  minute: isoTime,
  count: z.number(),
  intervalMin: durationMs,
  intervalP50: durationMs,
  intervalP99: durationMs,
  intervalMax: durationMs,
  marginMin: durationMs,
  marginP50: durationMs,
  marginP99: durationMs,
  marginMax: durationMs,
});

/** What one holder reported of a lease (POST /api/v1/telemetry): its last claim and its timings per minute. */
export const holderTimingsSchema = z.object({
  holder: text,
  /** Whether the holder, at its last report, believed it held the lease. */
  claims: z.boolean(),
  token: tokenText.nullable(),
  /** Since when it has claimed without a break; null while it does not. */
  claimsSince: isoTime.nullable(),
  reportedAt: isoTime,
  minutes: z.array(
    z.object({
      minute: isoTime,
      count: z.number(),
      failed: z.number(),
      rttAvgMs: z.number(),
      rttMaxMs: z.number(),
      /** null when none of the minute's renewals said how late it ran. */
      lateAvgMs: z.number().nullable(),
      lateMaxMs: z.number().nullable(),
    }),
  ),
});

export type Candidate = z.infer<typeof candidateSchema>;
export type LeaseView = z.infer<typeof leaseViewSchema>;
export type LeaseEventView = z.infer<typeof leaseEventViewSchema>;
export type FailoverView = z.infer<typeof failoverViewSchema>;
export type SourceStatusMessage = z.infer<typeof sourceStatusSchema>;
export type SourceView = z.infer<typeof sourceViewSchema>;
export type RenewalSample = z.infer<typeof renewalSampleSchema>;
export type RenewalRollup = z.infer<typeof renewalRollupSchema>;
export type HolderTimings = z.infer<typeof holderTimingsSchema>;
