// POST /api/v1/leases/{id}/force-expire and /force-release: what the path names, and the
// answers (docs/api.md). The route (app/api/v1/leases/[...path]/route.ts) stays thin.
import { NotFoundError, leaseIdParam } from '../api/params';
import { reply } from '../api/reply';
import { forceChangedSchema, forceDoneSchema, forceDryRunSchema } from '../domain/schemas';
import type { ForceAction } from '../sources/force';
import type { ForceOutcome } from './guarded-force';
import { ChangedSinceSeenError } from './force-request';

const ACTIONS: readonly string[] = ['force-expire', 'force-release'];

/** The lease id and the action of the path's segments; 404 when the path names no action. */
export function parseForcePath(segments: readonly string[]): { leaseId: string; action: ForceAction } {
  const last = segments.at(-1);
  if (segments.length < 2 || last === undefined || !ACTIONS.includes(last)) {
    throw new NotFoundError('POST goes to /api/v1/leases/{id}/force-expire or /api/v1/leases/{id}/force-release.');
  }
  return { leaseId: leaseIdParam(segments.slice(0, -1)), action: last as ForceAction };
}

export function forceResponse(outcome: ForceOutcome): Response {
  if (outcome.dryRun) return reply(forceDryRunSchema, { dryRun: true, leaseId: outcome.lease.id, plan: outcome.plan });
  return reply(forceDoneSchema, { previousToken: outcome.previousToken, newToken: outcome.newToken, auditId: outcome.auditId, leaseId: outcome.lease.id, detail: outcome.detail });
}

/** 409 with the lease as it is now, and what the backend holds. */
export function changedResponse(error: ChangedSinceSeenError): Response {
  return reply(forceChangedSchema, { error: error.code, message: error.message, current: error.current, backend: error.backend, auditId: error.auditId }, { status: 409 });
}
