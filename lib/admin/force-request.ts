// The body of POST /api/v1/leases/{id}/force-expire and /force-release (docs/api.md), and the
// errors of a guarded action as the API answers them.
import { z } from 'zod';
import { RequestError } from '../errors';
import type { LeaseView } from '../domain/types';
import { MAX_EXACT_CHARS, MAX_QUARANTINE_MS } from '../sources/force';

export const MIN_REASON_LENGTH = 10;

export const forceBody = z.strictObject({
  expectedHolder: z.string({ error: 'expected the holder you saw (text)' }).min(1).max(MAX_EXACT_CHARS),
  expectedToken: z
    .string({ error: 'expected the token you saw as a decimal string, or null for an unfenced lease' })
    .regex(/^\d{1,78}$/, { error: 'expected the token you saw as a decimal string of at most 78 digits' })
    .nullable(),
  reason: z
    .string({ error: 'expected a reason (text)' })
    .trim()
    .min(MIN_REASON_LENGTH, { error: `expected a reason of at least ${MIN_REASON_LENGTH} characters: it is kept in the audit log` })
    .max(2_000),
  quarantineMs: z.number().int().min(1).max(MAX_QUARANTINE_MS, { error: `expected at most ${MAX_QUARANTINE_MS} ms (an hour)` }).optional(),
  acknowledgeUnfenced: z.boolean().optional(),
  dryRun: z.boolean().optional(),
});

export type ForceBody = z.output<typeof forceBody>;

/** 409: the lease is not in the state the person saw; nothing was done. The answer carries the lease as it is now. */
export class ChangedSinceSeenError extends RequestError {
  readonly status = 409;
  readonly code = 'changed';
  constructor(
    message: string,
    readonly current: LeaseView | null,
    readonly backend: { holder: string | null; token: string | null } | null,
    readonly auditId: string,
  ) {
    super(message);
    this.name = 'ChangedSinceSeenError';
  }
}

/** 422: not possible for this lease (force-expire of an unfenced lease, a layout without atomic support...). */
export class NotPossibleError extends RequestError {
  readonly status = 422;
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'NotPossibleError';
  }
}

/** 503: the backend did not answer. For an action already sent, whether it was applied is not known. */
export class BackendUnavailableError extends RequestError {
  readonly status = 503;
  readonly code = 'source_unavailable';
  constructor(message: string) {
    super(message);
    this.name = 'BackendUnavailableError';
  }
}

/** 500: the action ended on the backend but its audit result could not be written (the store did not answer). */
export class AuditUnwrittenError extends RequestError {
  readonly status = 500;
  readonly code = 'audit_unwritten';
  constructor(message: string) {
    super(message);
    this.name = 'AuditUnwrittenError';
  }
}
