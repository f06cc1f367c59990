// What each route of the API answers (docs/api.md), as zod schemas over the objects of
// lease.ts and audit.ts. Every route declares its answer with one of these (lib/api/reply.ts),
// the browser checks what it fetches against them (components/live/api.ts fetchJson), and a
// test parses docs/api.md's examples with them (tests/unit/api-doc-shapes.test.ts).
import { z } from 'zod';
import { AUTH_METHODS } from '../audit';
import { TOKEN_ROLES } from '../roles';
import { auditEntrySchema } from './audit';
import { failoverViewSchema, holderTimingsSchema, isoTime, leaseEventViewSchema, leaseViewSchema, renewalRollupSchema, renewalSampleSchema, sourceViewSchema, tokenText } from './lease';

/** An error (docs/api.md "Errors"): a code and a sentence for people. */
export const apiErrorSchema = z.object({ error: z.string(), message: z.string() });

/** GET /api/v1/leases */
export const leaseListSchema = z.object({
  leases: z.array(leaseViewSchema),
  total: z.number(),
  /** More leases match than this page holds: `next` fetches the following page. */
  truncated: z.boolean(),
  /** The cursor of the next page (GET /api/v1/leases?cursor=), null on the last page. */
  next: z.string().nullable().optional(),
  /** Every lease (not only the page's), per source and per state. */
  counts: z
    .object({
      sources: z.record(z.string(), z.number()),
      states: z.object({ held: z.number(), free: z.number(), expired: z.number(), unknown: z.number(), stale: z.number(), problems: z.number() }),
    })
    .optional(),
  /** The live stream's position the list is current to (absent from a list the console moved on itself). */
  position: z.string().optional(),
  sources: z.array(sourceViewSchema),
});

/** GET /api/v1/leases/{id}: the lease, its 20 latest events, and its oldest event kept. */
export const leaseDetailSchema = leaseViewSchema.extend({
  events: z.array(leaseEventViewSchema),
  firstSeenAt: isoTime.nullable(),
});

/** GET /api/v1/leases/{id}/events */
export const eventPageSchema = z.object({ events: z.array(leaseEventViewSchema), next: z.string().nullable() });

/** GET /api/v1/leases/{id}/renewals */
export const renewalsSchema = z.object({
  samples: z.array(renewalSampleSchema),
  rollups: z.array(renewalRollupSchema),
  /** What holders reported themselves (lib/lease's reporter), beside what the backend showed. */
  holders: z.array(holderTimingsSchema),
});

/** GET /api/v1/leases/{...path}: one of the three, by the path. */
export const leasePathSchema = z.union([leaseDetailSchema, eventPageSchema, renewalsSchema]);

/** GET /api/v1/failovers */
export const failoverPageSchema = z.object({ failovers: z.array(failoverViewSchema), next: z.string().nullable() });

/** GET /api/v1/sources */
export const sourcesSchema = z.object({ sources: z.array(sourceViewSchema) });

/** GET /api/v1/audit */
export const auditPageSchema = z.object({ entries: z.array(auditEntrySchema), next: z.string().nullable() });

const forceStepSchema = z.object({ what: z.string(), statement: z.string(), args: z.array(z.string()) });

/** POST /api/v1/leases/{id}/force-expire | /force-release: 200, done. */
export const forceDoneSchema = z.object({
  previousToken: tokenText.nullable(),
  newToken: tokenText.nullable(),
  auditId: z.string(),
  leaseId: z.string(),
  detail: z.record(z.string(), z.unknown()),
});

/** The same, 200 with "dryRun": true: the plan, nothing sent. */
export const forceDryRunSchema = z.object({
  dryRun: z.literal(true),
  leaseId: z.string(),
  plan: z.object({ layout: z.string(), fenced: z.boolean(), steps: z.array(forceStepSchema), detail: z.record(z.string(), z.unknown()) }),
});

export const forceAnswerSchema = z.union([forceDoneSchema, forceDryRunSchema]);

/** The same, 409 changed: the lease as the store knows it now, what the backend held, the audit entry. */
export const forceChangedSchema = apiErrorSchema.extend({
  current: leaseViewSchema.nullable(),
  backend: z.object({ holder: z.string().nullable(), token: tokenText.nullable() }).nullable(),
  auditId: z.string(),
});

/** GET /api/v1/auth/me, and the sign-in's answer. */
export const principalSchema = z.object({
  signedIn: z.boolean(),
  name: z.string().nullable(),
  role: z.enum(TOKEN_ROLES).nullable(),
  method: z.enum(AUTH_METHODS).nullable(),
});

/** GET /api/health */
export const healthSchema = z.object({
  status: z.enum(['ok', 'not_ready']),
  store: z.object({ kind: z.enum(['postgres', 'pglite']) }),
  migrations: z.object({
    /** ahead: the store has migrations this version does not ship (a newer release migrated it). */
    state: z.enum(['up_to_date', 'pending', 'failed', 'ahead']),
    applied: z.number(),
    total: z.number(),
    latest: z.string().nullable(),
    pending: z.array(z.string()),
    failed: z.array(z.string()),
    /** The store's migrations this version does not ship. */
    ahead: z.array(z.string()),
  }),
  uptimeMs: z.number(),
});

/** GET /api/health/live */
export const liveSchema = z.object({ status: z.literal('ok') });

export type LeaseList = z.infer<typeof leaseListSchema>;
export type LeaseDetailView = z.infer<typeof leaseDetailSchema>;
export type EventPage = z.infer<typeof eventPageSchema>;
export type Renewals = z.infer<typeof renewalsSchema>;
export type FailoverPage = z.infer<typeof failoverPageSchema>;
export type AuditPage = z.infer<typeof auditPageSchema>;
export type StoreHealth = z.infer<typeof healthSchema>;
