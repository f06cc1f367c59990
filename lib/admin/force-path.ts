// POST /api/v1/leases/{id}/<action>, for each action of the table (actions.ts): what the path
// names, and the answers (docs/api.md). The route (app/api/v1/leases/[...path]/route.ts) stays thin.
import { NotFoundError, leaseIdParam } from '../api/params';
import { reply } from '../api/reply';
import { forceChangedSchema, forceDoneSchema, forceDryRunSchema } from '../domain/schemas';
import { actionNamed, type AdminActionTable } from '../domain/admin-actions';
import { ADMIN_ACTIONS, type AdminAction } from './actions';
import type { ForceOutcome } from './guarded-force';
import { ChangedSinceSeenError } from './force-request';

/**
 * The lease id and the action's row of the path's segments; 404 when the last names no action
 * of `actions` (the table unless a test hands its own).
 */
export function parseForcePath(segments: readonly string[], actions: AdminActionTable<AdminAction> = ADMIN_ACTIONS): { leaseId: string; action: AdminAction } {
  const action = segments.length < 2 ? null : actionNamed(segments.at(-1), actions);
  if (!action) throw new NotFoundError(`POST goes to ${Object.keys(actions).map((name) => `/api/v1/leases/{id}/${name}`).join(' or ')}.`);
  return { leaseId: leaseIdParam(segments.slice(0, -1)), action };
}

export function forceResponse(outcome: ForceOutcome): Response {
  if (outcome.dryRun) return reply(forceDryRunSchema, { dryRun: true, leaseId: outcome.lease.id, plan: outcome.plan });
  return reply(forceDoneSchema, { previousToken: outcome.previousToken, newToken: outcome.newToken, auditId: outcome.auditId, leaseId: outcome.lease.id, detail: outcome.detail });
}

/** 409 with the lease as it is now, and what the backend holds. */
export function changedResponse(error: ChangedSinceSeenError): Response {
  return reply(forceChangedSchema, { error: error.code, message: error.message, current: error.current, backend: error.backend, auditId: error.auditId }, { status: 409 });
}
