// Read models for pages and the API: rows from the store, shaped as docs/api.md.
import type { Store } from '../db';
import { changeEventsSince, changeOfHandsCandidates, findLeaseViews, firstEventAt, readLeaseEvents, readLeaseView, type EventQuery, type LeaseFilter } from '../db/leases';
import { eventViewOfRow } from '../db/lease-views';
export { readLeaseRenewals as leaseRenewals } from '../db/renewals';
import type { LeaseEventView, LeaseKind, LeaseView } from '../domain/types';
import { isChangeOfHands, isRestart } from '../domain/health';
import { recentChangeCounts, recentSince } from '../domain/recent-changes';
import { failoverCauseOf } from '../domain/failover-stats';
import type { FailoverView } from '../domain/schemas/lease';
import { systemClock } from '../time/clock';

export type { LeaseFilter, EventQuery } from '../db/leases';

/** Where one lease list starts and what it holds. */
export type LeaseList = { leases: LeaseView[]; total: number; truncated: boolean };

export async function listLeases(store: Store, filter: LeaseFilter = {}): Promise<LeaseList> {
  const [{ leases, total }, recent] = await Promise.all([findLeaseViews(store, filter), recentTransitions(store)]);
  return { leases: leases.map((lease) => ({ ...lease, recentTransitions: recent.get(lease.id) ?? 0 })), total, truncated: total > leases.length };
}

/** Per lease, how many times it changed hands in the last hour (leases with none are absent): lib/domain/recent-changes.ts. */
async function recentTransitions(store: Store, leaseId?: string): Promise<Map<string, number>> {
  const now = systemClock.wall();
  return recentChangeCounts(await changeEventsSince(store, new Date(recentSince(now)), leaseId), now);
}

/** When the lease was first seen, as far as the store still knows: its oldest event kept. */
export async function leaseFirstSeenAt(store: Store, id: string): Promise<string | null> {
  return (await firstEventAt(store, id))?.toISOString() ?? null;
}

export function getLease(store: Store, id: string): Promise<LeaseView | null> {
  return readLeaseView(store, id, async (leaseId) => (await recentTransitions(store, leaseId)).get(leaseId) ?? 0);
}

export type EventPage = { events: LeaseEventView[]; next: string | null };

/** A lease's events, newest first; `next` is the cursor of the following page. */
export function listLeaseEvents(store: Store, leaseId: string, query: EventQuery): Promise<EventPage> {
  return readLeaseEvents(store, leaseId, query);
}


/** A change of hands as the API shows it: lib/domain/schemas/lease.ts. */
export type { FailoverView };

/** Every change of hands across all leases (lib/domain/health.ts isChangeOfHands), newest first. */
export async function listFailovers(store: Store, query: { since?: Date; limit: number; before?: bigint }) {
  const rows = await changeOfHandsCandidates(store, query);
  const failovers = rows
    .slice(0, query.limit)
    .filter(isChangeOfHands)
    .map((row): FailoverView => {
      return { ...eventViewOfRow(row), cause: failoverCauseOf(row), restart: isRestart(row), kind: row.lease.kind as LeaseKind };
    });
  return { failovers, next: rows.length > query.limit ? rows[query.limit - 1]!.id.toString() : null };
}
