// The store's lease and event rows as the API shows them (LeaseView, LeaseEventView): the one
// converter from a Prisma row, used by the read models (lib/queries) and the cross-process
// relay (lib/live/relay.ts).
import type { Lease, LeaseEvent } from '../generated/prisma/client';
import { hasCountdown } from '../domain/lease-list';
import type { Backend, Candidate, EventType, LeaseEventView, LeaseKind, LeaseState, LeaseView } from '../domain/types';

/**
 * remainingMs comes from expiresAt, which the collector estimated on its own monotonic
 * clock and wrote in wall-clock terms; with the collector in this process (the default)
 * that is the same clock. observedAt is the last read of the source that saw the lease.
 */
/** A token column (NUMERIC(78,0)) as a decimal string: never in exponent notation. */
const tokenText = (value: { toFixed(): string } | null) => (value === null ? null : value.toFixed());
/** A duration column (BIGINT): the store and the collector keep them within ±2^53 (lib/domain/observation.ts MAX_DURATION_MS). */
export const ms = (value: bigint | null) => (value === null ? null : Number(value));

export function toLeaseView(row: Lease, now: number, sourceReadAt: Date | null, recentTransitions: number | null = null): LeaseView {
  const held = row.state === 'held';
  const observedAt = !row.stale && sourceReadAt && sourceReadAt > row.observedAt ? sourceReadAt : row.observedAt;
  return {
    id: row.id,
    source: row.sourceName,
    backend: row.backend as Backend,
    kind: row.kind as LeaseKind,
    key: row.key,
    state: row.state as LeaseState,
    holder: row.holder,
    lastHolder: held ? null : row.lastHolder,
    token: tokenText(row.token ?? (held ? null : row.lastToken)),
    fenced: row.fenced,
    ttlMs: ms(row.ttlMs),
    remainingMs: hasCountdown(row.state, row.stale, row.expiresAt !== null) ? Math.max(0, row.expiresAt!.getTime() - now) : null,
    acquiredAt: row.acquiredAt?.toISOString() ?? null,
    renewedAt: row.renewedAt?.toISOString() ?? null,
    expiresAt: row.expiresAt?.toISOString() ?? null,
    observedAt: observedAt.toISOString(),
    stale: row.stale,
    candidates: Array.isArray(row.candidates) ? (row.candidates as Candidate[]) : [],
    transitions: row.transitions,
    recentTransitions,
    lastIntervalMs: ms(row.lastIntervalMs),
    lastMarginMs: ms(row.lastMarginMs),
    problem: row.problem,
    detail: (row.detail as Record<string, unknown> | null) ?? null,
  };
}

export function toEventView(row: LeaseEvent): LeaseEventView {
  return {
    id: row.id.toString(),
    leaseId: row.leaseId,
    type: row.type as EventType,
    at: row.at.toISOString(),
    holder: row.holder,
    previousHolder: row.previousHolder,
    token: tokenText(row.token),
    previousToken: tokenText(row.previousToken),
    gapMs: ms(row.gapMs),
    detail: row.detail,
  };
}

