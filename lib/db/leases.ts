// Reads of the Lease and LeaseEvent tables, as the API's views (through lib/domain's one converter: lease-views.ts).
// The collector writes them (observer-writes.ts); everything else reads them through here.
import { CHANGE_TYPES } from '../domain/health';
import type { EventType, LeaseEventView, LeaseState, LeaseView } from '../domain/types';
import type { Prisma } from '../generated/prisma/client';
import { eventViewOfRow, leaseViewOfRow } from './lease-views';
import { readSource, sourceReadTimes } from './sources';
import type { Store } from './store';
import { systemClock } from '../time/clock';

export type LeaseFilter = { source?: string; state?: LeaseState; q?: string; limit?: number };
export type LeaseScope = { ids: readonly string[] } | { source: string } | 'all';

/** The leases of a scope as views, each "observed at" its source's last good read when later. */
export async function readLeaseViews(store: Store, scope: LeaseScope): Promise<LeaseView[]> {
  const where = scope === 'all' ? {} : 'ids' in scope ? { id: { in: [...scope.ids] } } : { sourceName: scope.source };
  const [rows, readAt] = await Promise.all([store.prisma.lease.findMany({ where }), sourceReadTimes(store)]);
  const now = systemClock.wall();
  return rows.map((row) => leaseViewOfRow(row, now, readAt.get(row.sourceName) ?? null));
}

/** One lease as a view, with its changes of hands in the last hour; null when the store has none by that id. */
export async function readLeaseView(store: Store, id: string, recentTransitions: (id: string) => Promise<number>): Promise<LeaseView | null> {
  const row = await store.prisma.lease.findUnique({ where: { id } });
  if (!row) return null;
  const [source, recent] = await Promise.all([readSource(store, row.sourceName), recentTransitions(id)]);
  return leaseViewOfRow(row, systemClock.wall(), source?.lastGoodReadAt ?? null, recent);
}

/** A page of leases matching the filter, in (source, key) order, with how many match in all (recentTransitions not counted: null). */
export async function findLeaseViews(store: Store, filter: LeaseFilter): Promise<{ leases: LeaseView[]; total: number }> {
  const where: Prisma.LeaseWhereInput = {
    sourceName: filter.source,
    state: filter.state,
    ...(filter.q
      ? { OR: [{ key: { contains: filter.q, mode: 'insensitive' } }, { holder: { contains: filter.q, mode: 'insensitive' } }, { lastHolder: { contains: filter.q, mode: 'insensitive' } }] }
      : {}),
  };
  const [rows, total, readAt] = await Promise.all([
    store.prisma.lease.findMany({ where, orderBy: [{ sourceName: 'asc' }, { key: 'asc' }], take: filter.limit ?? 10_000 }),
    store.prisma.lease.count({ where }),
    sourceReadTimes(store),
  ]);
  const now = systemClock.wall();
  return { leases: rows.map((row) => leaseViewOfRow(row, now, readAt.get(row.sourceName) ?? null)), total };
}

/** How many leases each source has in the store. */
export async function leaseCountsBySource(store: Store): Promise<Map<string, number>> {
  const counts = await store.prisma.lease.groupBy({ by: ['sourceName'], _count: { _all: true } });
  return new Map(counts.map((c) => [c.sourceName, c._count._all]));
}

/** How many leases each source has per state, and whether stale. */
export async function leaseCountsByState(store: Store) {
  const counts = await store.prisma.lease.groupBy({ by: ['sourceName', 'state', 'stale'], _count: { _all: true } });
  return counts.map((c) => ({ source: c.sourceName, state: c.state, stale: c.stale, count: c._count._all }));
}

/** Events that may be changes of hands (health.ts isChangeOfHands decides) since a time, of one lease or all. */
export function changeEventsSince(store: Store, since: Date, leaseId?: string) {
  return store.prisma.leaseEvent.findMany({
    where: { at: { gte: since }, type: { in: [...CHANGE_TYPES] }, ...(leaseId ? { leaseId } : {}) },
    select: { leaseId: true, at: true, type: true, holder: true, previousHolder: true, detail: true },
  });
}

/** Events by id, oldest first. */
export async function readEventViews(store: Store, ids: readonly bigint[]): Promise<LeaseEventView[]> {
  const rows = await store.prisma.leaseEvent.findMany({ where: { id: { in: [...ids] } }, orderBy: { id: 'asc' } });
  return rows.map(eventViewOfRow);
}

/** When the lease was first seen, as far as the store still knows: its oldest event kept. */
export async function firstEventAt(store: Store, leaseId: string): Promise<Date | null> {
  // The collector's events only (seq 1, 2, ...): an admin action's event has a negative seq (lib/db/admin-events.ts).
  const first = await store.prisma.leaseEvent.findFirst({ where: { leaseId, seq: { gt: 0 } }, orderBy: { seq: 'asc' }, select: { at: true } });
  return first?.at ?? null;
}

export type EventQuery = { since?: Date; types?: EventType[]; before?: bigint; limit: number };

/** A page of a lease's events, newest first, and the cursor of the next page. */
export async function readLeaseEvents(store: Store, leaseId: string, query: EventQuery): Promise<{ events: LeaseEventView[]; next: string | null }> {
  const rows = await store.prisma.leaseEvent.findMany({
    where: {
      leaseId,
      ...(query.since ? { at: { gte: query.since } } : {}),
      ...(query.types?.length ? { type: { in: query.types } } : {}),
      ...(query.before !== undefined ? { id: { lt: query.before } } : {}),
    },
    orderBy: { id: 'desc' },
    take: query.limit + 1,
  });
  const page = rows.slice(0, query.limit);
  return { events: page.map(eventViewOfRow), next: rows.length > query.limit ? page.at(-1)!.id.toString() : null };
}

/** Events that may be changes of hands across all leases, newest first, a page of `limit` (and one more, to know of a next page). */
export function changeOfHandsCandidates(store: Store, query: { since?: Date; limit: number; before?: bigint }) {
  return store.prisma.leaseEvent.findMany({
    where: {
      ...(query.since ? { at: { gte: query.since } } : {}),
      ...(query.before !== undefined ? { id: { lt: query.before } } : {}),
      OR: [{ type: 'taken_over' }, { type: 'acquired', previousHolder: { not: null } }],
    },
    orderBy: { id: 'desc' },
    take: query.limit + 1,
    include: { lease: { select: { kind: true } } },
  });
}
