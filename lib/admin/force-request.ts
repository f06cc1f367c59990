// The body of POST /api/v1/leases/{id}/<action> (docs/api.md), and the errors of a guarded
// action as the API answers them. The limits of what the person saw are the contract's
// (lib/sources/force.ts SEEN_FIELDS): written once, and checked once, here, for a 400.
import { z } from 'zod';
import { RequestError } from '../errors';
import type { LeaseView } from '../domain/types';
import { SEEN_FIELDS } from '../sources/force';

export const MIN_REASON_LENGTH = 10;

export const forceBody = z.strictObject({
  expectedHolder: SEEN_FIELDS.expectedHolder,
  expectedToken: SEEN_FIELDS.expectedToken,
  reason: z
    .string({ error: 'expected a reason (text)' })
    .trim()
    .min(MIN_REASON_LENGTH, { error: `expected a reason of at least ${MIN_REASON_LENGTH} characters: it is kept in the audit log` })
    .max(2_000),
  quarantineMs: SEEN_FIELDS.quarantineMs,
  acknowledgeUnfenced: z.boolean().optional(),
  dryRun: z.boolean().optional(),
})
  // Parsed here once: the contract takes what the person saw from it without checking it again
  // (lib/sources/force.ts checkedRequest), and nothing unparsed can pass for it.
  .brand<'SeenChecked'>();

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
