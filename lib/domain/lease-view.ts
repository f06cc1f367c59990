// The one converter of a lease to the API's and the stream's shape (LeaseView, docs/api.md).
// Both ways a lease reaches a reader go through it: the collector's picture of a lease the
// moment it has written it (leaseFactsOf, below; published on the live bus) and the store's
// row (lib/db/lease-views.ts leaseFactsOfRow; the read models, the list cache, the relay). Each
// side only lays its own representation out as LeaseFacts; every rule is here:
//
// - the token shown: the current one while held, else the last holder's;
// - `fenced`: whether the lease has a fencing token at all (its current or last one), the
//   same rule for both (the store's `fenced` column is written from it, lib/db/lease-rows.ts,
//   and no longer read back: a column can drift from the token beside it, a rule cannot);
// - `remainingMs`: countdown.ts;
// - `observedAt`: the last read of its source that saw it. The collector rewrites a lease's row
//   only when the lease changed, so a row's own time can be older than the source's last good
//   read, which saw it all the same (a lease that was not seen is gone or stale): the later of
//   the two, unless the lease is stale;
// - times are whole milliseconds, as the store keeps them, and so are durations.
import { remainingMsOf } from './countdown';
import type { TrackedLease } from './tracked-lease';
import type { Backend, Candidate, LeaseKind, LeaseState, LeaseView } from './types';

/** What a view is made of, from either side. Times are wall-clock milliseconds; tokens decimal text. */
export type LeaseFacts = {
  id: string;
  source: string;
  backend: Backend;
  kind: LeaseKind;
  key: string;
  state: LeaseState;
  holder: string | null;
  lastHolder: string | null;
  token: string | null;
  lastToken: string | null;
  ttlMs: number | null;
  acquiredAtMs: number | null;
  renewedAtMs: number | null;
  expiresAtMs: number | null;
  observedAtMs: number;
  stale: boolean;
  candidates: Candidate[];
  transitions: number;
  lastIntervalMs: number | null;
  lastMarginMs: number | null;
  problem: string | null;
  detail: Record<string, unknown> | null;
};

export type ViewContext = {
  /** The server's wall clock now (the clock the expiry was written on). */
  now: number;
  /** The last good read of the lease's source, when known (the store's path). */
  sourceReadAtMs?: number | null;
  /** Changes of hands in the last hour (recent-changes.ts); null when not counted (live messages). */
  recentTransitions?: number | null;
};

/** Whether a lease carries a fencing token (its current one, or its last holder's). */
export const isFenced = (lease: { token: unknown; lastToken: unknown }) => lease.token !== null || lease.lastToken !== null;

/** A time as the store keeps it: whole milliseconds (a Date truncates, and so does this). */
export const wholeMs = (ms: number | null) => (ms === null ? null : Math.trunc(ms));
/** A duration as the store keeps it: rounded to whole milliseconds. */
export const roundMs = (ms: number | null) => (ms === null ? null : Math.round(ms));

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function toLeaseView(f: LeaseFacts, context: ViewContext): LeaseView {
  const held = f.state === 'held';
  const readAt = context.sourceReadAtMs ?? null;
  const observedAtMs = !f.stale && readAt !== null && readAt > f.observedAtMs ? readAt : f.observedAtMs;
  const expiresAtMs = wholeMs(f.expiresAtMs);
  return {
    id: f.id,
    source: f.source,
    backend: f.backend,
    kind: f.kind,
    key: f.key,
    state: f.state,
    holder: f.holder,
    lastHolder: held ? null : f.lastHolder,
    token: f.token ?? (held ? null : f.lastToken),
    fenced: isFenced(f),
    ttlMs: roundMs(f.ttlMs),
    remainingMs: remainingMsOf({ state: f.state, stale: f.stale, expiresAtMs }, context.now),
    acquiredAt: iso(wholeMs(f.acquiredAtMs)),
    renewedAt: iso(wholeMs(f.renewedAtMs)),
    expiresAt: iso(expiresAtMs),
    observedAt: iso(wholeMs(observedAtMs))!,
    stale: f.stale,
    candidates: f.candidates,
    transitions: f.transitions,
    recentTransitions: context.recentTransitions ?? null,
    lastIntervalMs: roundMs(f.lastIntervalMs),
    lastMarginMs: roundMs(f.lastMarginMs),
    problem: f.problem,
    detail: f.detail,
  };
}

const text = (token: bigint | null) => (token === null ? null : token.toString());

/** The collector's picture of a lease, laid out for toLeaseView. */
export function leaseFactsOf(lease: TrackedLease): LeaseFacts {
  return {
    id: lease.id,
    source: lease.source,
    backend: lease.backend,
    kind: lease.kind,
    key: lease.key,
    state: lease.state,
    holder: lease.holder,
    lastHolder: lease.lastHolder,
    token: text(lease.token),
    lastToken: text(lease.lastToken),
    ttlMs: lease.ttlMs,
    acquiredAtMs: lease.acquiredAtWall,
    renewedAtMs: lease.renewedAtWall,
    expiresAtMs: lease.expiresAtWall,
    observedAtMs: lease.observedAtWall,
    stale: lease.stale,
    candidates: lease.candidates.map((c) => ({ holder: c.holder, token: text(c.token) })),
    transitions: lease.transitions,
    lastIntervalMs: lease.lastRenewal?.intervalMs ?? null,
    lastMarginMs: lease.lastRenewal?.marginMs ?? null,
    problem: lease.problem,
    detail: lease.detail,
  };
}
