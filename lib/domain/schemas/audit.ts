// One audit entry as the API shows it (GET /api/v1/audit, docs/api.md): the type
// lib/domain/audit.ts names AuditEntryView is inferred from this.
import { z } from 'zod';
import type { JsonValue } from '../audit';
import { AUDIT_PHASES, AUTH_METHODS } from '../audit';
import { isoTime, tokenText } from './lease';

/** A JSON value as the store gives it back (what JSON.parse makes). */
export const jsonValueSchema: z.ZodType<JsonValue> = z.lazy(() =>
  z.union([z.null(), z.boolean(), z.number(), z.string(), z.array(jsonValueSchema), z.record(z.string(), jsonValueSchema)]),
);

export const auditEntrySchema = z.object({
  id: z.string(),
  at: isoTime,
  /** Ties the `requested` entry of an action to its result. */
  requestId: z.string(),
  phase: z.enum(AUDIT_PHASES),
  /** HTTP-like status of a result (403 forbidden, 409 the state is not the one expected, 422 invalid); null when none. */
  status: z.number().nullable(),
  action: z.string(),
  actor: z.string(),
  actorRole: z.string(),
  authMethod: z.enum(AUTH_METHODS),
  clientAddress: z.string().nullable(),
  leaseId: z.string().nullable(),
  reason: z.string().nullable(),
  /** The state the actor saw and named (the precondition). */
  expectedHolder: z.string().nullable(),
  expectedToken: tokenText.nullable(),
  /** The state found on the backend. */
  actualHolder: z.string().nullable(),
  actualToken: tokenText.nullable(),
  previousToken: tokenText.nullable(),
  newToken: tokenText.nullable(),
  dryRun: z.boolean(),
  detail: jsonValueSchema.nullable(),
  /** The hash of the entry before it (null for the first), and its own: sha256, hex. */
  prevHash: z.string().nullable(),
  hash: z.string(),
});

export type AuditEntry = z.infer<typeof auditEntrySchema>;
