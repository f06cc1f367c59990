// The steps every admin action takes (docs/admin-actions.md), for any row of the table
// (actions.ts), in this order:
//   1. the lease, as the store last saw it (404 when it has none by that id), read once;
//   2. the row's rules (actions.ts refusalOf): permission for this lease, fencing,
//      acknowledgement, and a source still configured — a refusal is audited (403, 422);
//   3. a dry run stops here with the plan: what would be sent, nothing sent, nothing audited;
//   4. a `requested` audit entry, before anything is sent to the backend;
//   5. one compare-and-set on the backend (lib/sources/*/force.ts) against the holder and the
//      token the person saw;
//   6. a result entry: done (previous and new token), refused 409 (not the state seen: the
//      answer carries the lease as it is now) or 422, or error (the backend did not answer:
//      whether it was applied is then unknown, and the entry says so);
//   7. on success, the row's event (force_expired, force_released) in the lease's history;
//   8. and a force_action alert (lib/alerts/force-alert.ts), if a rule asks for one.
import { randomUUID } from 'node:crypto';
import { AuthError } from '../auth/errors';
import type { Permission } from '../auth/permissions';
import type { Principal } from '../auth/principal';
import type { SourceConfig } from '../config';
import { NotFoundError } from '../api/params';
import { raiseForceAlert } from '../alerts/force-alert';
import { appendAdminLeaseEvent } from '../db/admin-events';
import { appendAudit, AuditInputError, type AuditInput, type AuditRow } from '../db/audit';
import { retrying, retryLine } from '../time/retry';
import { readLeaseView } from '../db/leases';
import type { Store } from '../db/store';
import type { LeaseView } from '../domain/types';
import { logger, type Logger } from '../log';
import type { Clock } from '../time/clock';
import { SourceUnavailableError } from '../sources/errors';
import type { Parts } from '../parts';
import { getLease } from '../queries/leases';
import { checkedRequest, ForceConflictError, ForceNotPossibleError, type ForceActions, type ForceDone, type ForcePlan } from '../sources/force';
import { refusalOf, type AdminAction } from './actions';
import { forceActionsOf } from './backend-actions';
import { AuditUnwrittenError, BackendUnavailableError, ChangedSinceSeenError, NotPossibleError, type ForceBody } from './force-request';

/** How long a result entry is retried while the store does not answer. */
const RESULT_RETRY_MS = 30_000;

/** How long the backend may take to apply an action before it counts as not answering. */
const EXECUTE_TIMEOUT_MS = 15_000;

export type ForceContext = {
  store: Store;
  leaseId: string;
  body: ForceBody;
  principal: Principal;
  /** The configured sources. */
  sources: readonly SourceConfig[];
  /** Where the connections to each source are kept (the server's composition root, lib/root; a test's own). */
  root: Parts;
  /** The console's address, for the link in a force_action alert (config alerts.publicUrl). */
  publicUrl?: string;
  /** A permission the principal was already checked for (the route's rule, lib/auth/route-rules.ts): not asked again. */
  granted?: Permission;
  /** Its area's logger (the server hands its root's `admin` child; default the process's). */
  log?: Logger;
  /** What the force_action alert's times are read on (the root's; default the system clock). */
  clock?: Clock;
};

export type ForceOutcome =
  | { dryRun: true; plan: ForcePlan; lease: LeaseView }
  | { dryRun: false; previousToken: string | null; newToken: string | null; auditId: string; lease: LeaseView; detail: Record<string, unknown> };

/** What the audit of an action needs of its context. */
type AuditedContext = Pick<ForceContext, 'store' | 'leaseId' | 'body' | 'principal'>;

function auditBase(action: AdminAction, context: AuditedContext, requestId: string): Omit<AuditInput, 'phase'> {
  const { principal, body, leaseId } = context;
  return {
    requestId,
    action: action.name,
    actor: principal.name,
    actorRole: principal.role,
    authMethod: principal.method,
    clientAddress: principal.address,
    leaseId,
    reason: body.reason,
    expectedHolder: body.expectedHolder,
    expectedToken: body.expectedToken,
    dryRun: false,
    detail: { ...(body.quarantineMs ? { quarantineMs: body.quarantineMs } : {}), ...(body.acknowledgeUnfenced ? { acknowledgeUnfenced: true } : {}) },
  };
}

/**
 * Records a refusal that happened before the action began (a 403 from the route's rule, or the
 * row's rules). `lease`: the lease when the caller has read it already; else it is read here.
 */
export async function auditRefusal(action: AdminAction, context: AuditedContext, error: Error & { status: number }, lease?: LeaseView): Promise<void> {
  if (context.body.dryRun) return;
  // An anonymous visitor is nobody to record, and a lease never observed is nothing: neither
  // may fill the log (each entry takes the table's lock) by asking again and again.
  if (context.principal.method === 'anonymous' || !(lease ?? (await readLeaseView(context.store, context.leaseId, async () => 0)))) return;
  const base = auditBase(action, context, randomUUID());
  await appendAudit(context.store, { ...base, phase: 'requested' });
  await appendAudit(context.store, { ...base, phase: 'refused', status: error.status, detail: { ...(base.detail as object), message: error.message } });
}

/** The logger an action writes to: the one it was handed, or the process's `admin` logger. */
const logOf = (context: Pick<ForceContext, 'log'>) => context.log ?? logger('admin');

/** Runs one row of the table (actions.ts) on one lease: the steps at the head of this file. */
export async function runForceAction(action: AdminAction, context: ForceContext): Promise<ForceOutcome> {
  const { store, leaseId, body } = context;
  const log = logOf(context);
  const lease = await readLeaseView(store, leaseId, async () => 0);
  if (!lease) throw new NotFoundError(`No lease "${leaseId}" has been observed.`);
  let actions: ForceActions;
  try {
    const refusal = refusalOf(action, lease, context);
    if (refusal) throw refusal;
    // A lease whose source is no longer configured is refused (422) like the rules refuse: audited.
    actions = forceActionsOf(context.root, store, lease.source, context.sources);
  } catch (error) {
    if (!(error instanceof AuthError || error instanceof NotPossibleError)) throw error;
    await auditRefusal(action, context, error, lease);
    throw error;
  }
  // The body was parsed once (forceBody): the request is made from it without checking it again,
  // inside the steps whose errors are answered (and audited) as the backend's refusals.
  const request = () => checkedRequest(action.name, lease.key, body);
  if (body.dryRun) {
    try {
      return { dryRun: true, plan: await actions.plan(request(), AbortSignal.timeout(EXECUTE_TIMEOUT_MS)), lease };
    } catch (error) {
      throw publicError(error);
    }
  }
  const base = auditBase(action, context, randomUUID());
  await appendAudit(store, { ...base, phase: 'requested' });
  let done: ForceDone;
  try {
    done = await actions.execute(request(), AbortSignal.timeout(EXECUTE_TIMEOUT_MS));
  } catch (error) {
    throw await auditFailure(context, base, error);
  }
  const entry = await appendResult(store, log, {
    ...base,
    phase: 'done',
    status: 200,
    actualHolder: body.expectedHolder,
    actualToken: done.previousToken,
    previousToken: done.previousToken,
    newToken: done.newToken,
    detail: { ...(base.detail as object), ...done.detail },
  });
  await appendAdminLeaseEvent(store, {
    leaseId,
    type: action.eventType,
    at: new Date(entry.at),
    previousHolder: body.expectedHolder,
    previousToken: done.previousToken,
    newToken: done.newToken,
    auditId: entry.id,
    detail: { actor: context.principal.name, reason: body.reason, ...(body.quarantineMs ? { quarantineMs: body.quarantineMs } : {}) },
  }).catch((error: unknown) => log.error({ leaseId, error: (error as Error).message }, 'the force event could not be added to the lease history'));
  // 8. A force_action alert, for those who want to hear of every forced action.
  await raiseForceAlert(
    store,
    { lease, action: action.eventType, actor: context.principal.name, reason: body.reason, previousToken: done.previousToken, newToken: done.newToken, auditId: entry.id.toString() },
    context.publicUrl,
    { clock: context.clock, log },
  ).catch((error: unknown) => log.error({ leaseId, error: (error as Error).message }, 'the force_action alert could not be raised'));
  return { dryRun: false, previousToken: done.previousToken, newToken: done.newToken, auditId: entry.id.toString(), lease, detail: done.detail };
}

/** The result entry of an action that did not complete, and the error to answer with. */
async function auditFailure(context: ForceContext, base: Omit<AuditInput, 'phase'>, error: unknown): Promise<Error> {
  const { store, leaseId } = context;
  const log = logOf(context);
  if (error instanceof ForceConflictError) {
    const entry = await appendResult(store, log, { ...base, phase: 'refused', status: 409, actualHolder: error.current?.holder ?? null, actualToken: error.current?.token ?? null });
    // As GET /api/v1/leases/:id shows it (its changes of hands in the last hour counted too).
    const current = await getLease(store, leaseId);
    return new ChangedSinceSeenError(error.message, current, error.current, entry.id.toString());
  }
  if (error instanceof ForceNotPossibleError) {
    await appendResult(store, log, { ...base, phase: 'refused', status: 422, detail: { ...(base.detail as object), message: error.message } });
    return publicError(error);
  }
  const message = error instanceof SourceUnavailableError ? error.message : error instanceof Error && error.name !== 'TimeoutError' ? error.message.slice(0, 500) : 'the backend did not answer in time';
  await appendResult(store, log, { ...base, phase: 'error', status: 503, detail: { ...(base.detail as object), message, outcome: 'unknown' } });
  return new BackendUnavailableError(`${message}. Whether the action was applied is not known: look at the lease before trying again.`);
}

function publicError(error: unknown): Error {
  if (error instanceof ForceNotPossibleError) return new NotPossibleError(error.code === 'not_found' ? 'not_found_on_backend' : error.code, error.message);
  if (error instanceof SourceUnavailableError) return new BackendUnavailableError(error.message);
  return error as Error;
}

/**
 * A result entry, once the backend was asked: retried for up to 30 s while the store does not
 * answer, since the action may have happened. If it still cannot be written, the log line holds
 * the whole entry (tokens included) and the person is told so: the `requested` entry is in the
 * log, and the backend's state is the truth.
 */
async function appendResult(store: Store, log: Logger, entry: AuditInput): Promise<AuditRow> {
  const row = await retrying(() => appendAudit(store, entry), {
    what: `writing the audit result of ${entry.action} on ${entry.leaseId}`,
    signal: AbortSignal.timeout(RESULT_RETRY_MS),
    initialDelayMs: 200,
    maxDelayMs: 5_000,
    fatal: (error) => error instanceof AuditInputError,
    onFailure: (failure) => log.warn(retryLine(failure)),
  });
  if (row) return row;
  log.error({ entry: { ...entry, detail: entry.detail } }, 'the audit result of an admin action could not be written');
  throw new AuditUnwrittenError(
    `The ${entry.action} of ${entry.leaseId} ended (${entry.phase}${entry.newToken ? `, token ${String(entry.previousToken)} → ${String(entry.newToken)}` : ''}), but the store did not take its audit result; the server log has it. Look at the lease before acting again.`,
  );
}
