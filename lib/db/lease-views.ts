// The store's lease and event rows laid out for lib/domain's converters (lease-view.ts
// toLeaseView, event-view.ts toEventView), the same ones the collector's published leases go
// through: used by the read models (lib/queries) and the cross-process relay (lib/live/relay.ts).
import type { Lease, LeaseEvent } from '../generated/prisma/client';
import { toEventView, type EventFacts } from '../domain/event-view';
import { toLeaseView, type LeaseFacts } from '../domain/lease-view';
import type { Backend, Candidate, EventType, LeaseEventView, LeaseKind, LeaseState, LeaseView } from '../domain/types';

/** A token column (NUMERIC(78,0)) as a decimal string: never in exponent notation. */
const tokenText = (value: { toFixed(): string } | null) => (value === null ? null : value.toFixed());
/** A duration column (BIGINT): the store and the collector keep them within ±2^53 (lib/domain/observation.ts MAX_DURATION_MS). */
export const ms = (value: bigint | null) => (value === null ? null : Number(value));

/** A lease row as the facts of its view. */
export function leaseFactsOfRow(row: Lease): LeaseFacts {
  return {
    id: row.id,
    source: row.sourceName,
    backend: row.backend as Backend,
    kind: row.kind as LeaseKind,
    key: row.key,
    state: row.state as LeaseState,
    holder: row.holder,
    lastHolder: row.lastHolder,
    token: tokenText(row.token),
    lastToken: tokenText(row.lastToken),
    ttlMs: ms(row.ttlMs),
    acquiredAtMs: row.acquiredAt?.getTime() ?? null,
    renewedAtMs: row.renewedAt?.getTime() ?? null,
    expiresAtMs: row.expiresAt?.getTime() ?? null,
    observedAtMs: row.observedAt.getTime(),
    stale: row.stale,
    candidates: Array.isArray(row.candidates) ? (row.candidates as Candidate[]) : [],
    transitions: row.transitions,
    lastIntervalMs: ms(row.lastIntervalMs),
    lastMarginMs: ms(row.lastMarginMs),
    problem: row.problem,
    detail: (row.detail as Record<string, unknown> | null) ?? null,
  };
}

/**
 * A lease row as the API shows it. remainingMs comes from expiresAt, which the collector
 * estimated on its own monotonic clock and wrote in wall-clock terms; with the collector in
 * this process (the default) that is the same clock as `now`. `sourceReadAt`: the source's
 * last good read (lib/domain/lease-view.ts says what it does to observedAt).
 */
export function leaseViewOfRow(row: Lease, now: number, sourceReadAt: Date | null, recentTransitions: number | null = null): LeaseView {
  return toLeaseView(leaseFactsOfRow(row), { now, sourceReadAtMs: sourceReadAt?.getTime() ?? null, recentTransitions });
}

/** An event row as the facts of its view. */
export function eventFactsOfRow(row: LeaseEvent): EventFacts {
  return {
    id: row.id.toString(),
    leaseId: row.leaseId,
    type: row.type as EventType,
    atMs: row.at.getTime(),
    holder: row.holder,
    previousHolder: row.previousHolder,
    token: tokenText(row.token),
    previousToken: tokenText(row.previousToken),
    gapMs: ms(row.gapMs),
    detail: row.detail,
  };
}

export function eventViewOfRow(row: LeaseEvent): LeaseEventView {
  return toEventView(eventFactsOfRow(row));
}
