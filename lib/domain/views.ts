// How tracked leases and their changes look on the wire (DESIGN.md section 5): tokens as
// decimal strings, times as ISO strings, remaining time from the observer's clock.
import { hasCountdown } from './lease-list';
import type { LeaseChange, TrackedLease } from './observe';
import type { LeaseEventView, LeaseView } from './types';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** `nowWall` is this process's wall clock, on which expiresAtWall was computed. */
export function leaseView(lease: TrackedLease, nowWall: number): LeaseView {
  const live = hasCountdown(lease.state, lease.stale, lease.expiresAtWall !== null);
  return {
    id: lease.id,
    source: lease.source,
    backend: lease.backend,
    kind: lease.kind,
    key: lease.key,
    state: lease.state,
    holder: lease.holder,
    lastHolder: lease.state === 'held' ? null : lease.lastHolder,
    token: (lease.token ?? (lease.state === 'held' ? null : lease.lastToken))?.toString() ?? null,
    fenced: (lease.token ?? lease.lastToken) !== null,
    ttlMs: lease.ttlMs,
    remainingMs: live ? Math.max(0, Math.round(lease.expiresAtWall! - nowWall)) : null,
    acquiredAt: iso(lease.acquiredAtWall),
    renewedAt: iso(lease.renewedAtWall),
    expiresAt: iso(lease.expiresAtWall),
    observedAt: iso(lease.observedAtWall)!,
    stale: lease.stale,
    candidates: lease.candidates.map((c) => ({ holder: c.holder, token: c.token?.toString() ?? null })),
    transitions: lease.transitions,
    recentTransitions: null,
    lastIntervalMs: lease.lastRenewal?.intervalMs ?? null,
    lastMarginMs: lease.lastRenewal?.marginMs ?? null,
    problem: lease.problem,
    detail: lease.detail,
  };
}

export function eventView(id: string, leaseId: string, change: LeaseChange): LeaseEventView {
  return {
    id,
    leaseId,
    type: change.type,
    at: new Date(change.atWall).toISOString(),
    holder: change.holder,
    previousHolder: change.previousHolder,
    token: change.token?.toString() ?? null,
    previousToken: change.previousToken?.toString() ?? null,
    gapMs: change.gapMs,
    detail: change.detail,
  };
}
