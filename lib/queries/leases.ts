// Read models for pages and the API: rows from the store, shaped as DESIGN.md section 5.
import type { Store } from '../db';
import { changeEventsSince, changeOfHandsCandidates, findLeaseViews, firstEventAt, readLeaseEvents, readLeaseView, type EventQuery, type LeaseFilter } from '../db/leases';
import { ms, toEventView } from '../db/lease-views';
import type { LeaseEventView, LeaseView } from '../domain/types';
import { isChangeOfHands, isRestart } from '../domain/health';
import { failoverCauseOf, type FailoverCause } from '../domain/failover-stats';

export type { LeaseFilter, EventQuery } from '../db/leases';

/** Where one lease list starts and what it holds. */
export type LeaseList = { leases: LeaseView[]; total: number; truncated: boolean };

export async function listLeases(store: Store, filter: LeaseFilter = {}): Promise<LeaseList> {
  const [{ leases, total }, recent] = await Promise.all([findLeaseViews(store, filter), recentTransitions(store)]);
  return { leases: leases.map((lease) => ({ ...lease, recentTransitions: recent.get(lease.id) ?? 0 })), total, truncated: total > leases.length };
}

const HOUR_MS = 3_600_000;

/** Per lease, how many times it changed hands in the last hour (leases with none are absent; first sightings do not count). */
async function recentTransitions(store: Store, leaseId?: string): Promise<Map<string, number>> {
  const events = await changeEventsSince(store, new Date(Date.now() - HOUR_MS), leaseId);
  const counts = new Map<string, number>();
  for (const event of events) if (isChangeOfHands(event)) counts.set(event.leaseId, (counts.get(event.leaseId) ?? 0) + 1);
  return counts;
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

export async function leaseRenewals(store: Store, leaseId: string, since?: Date) {
  const [samples, rollups] = await Promise.all([
    store.prisma.renewalSample.findMany({ where: { leaseId, ...(since ? { at: { gte: since } } : {}) }, orderBy: { seq: 'asc' } }),
    store.prisma.renewalRollup.findMany({ where: { leaseId, ...(since ? { minute: { gte: since } } : {}) }, orderBy: { minute: 'asc' } }),
  ]);
  return {
    samples: samples.map((s) => ({
      seq: s.seq.toString(),
      at: s.at.toISOString(),
      holder: s.holder,
      intervalMs: Number(s.intervalMs),
      marginMs: Number(s.marginMs),
      ttlMs: ms(s.ttlMs),
      marginPercent: s.ttlMs ? Math.round((Number(s.marginMs) / Number(s.ttlMs)) * 1000) / 10 : null,
    })),
    rollups: rollups.map((r) => ({
      minute: r.minute.toISOString(),
      count: r.count,
      intervalMin: Number(r.intervalMin),
      intervalP50: Number(r.intervalP50),
      intervalP99: Number(r.intervalP99),
      intervalMax: Number(r.intervalMax),
      marginMin: Number(r.marginMin),
      marginP50: Number(r.marginP50),
      marginP99: Number(r.marginP99),
      marginMax: Number(r.marginMax),
    })),
  };
}

export type FailoverView = LeaseEventView & {
  cause: FailoverCause;
  /** The same node under a new instance (lib/domain/health.ts isRestart), not another node. */
  restart: boolean;
};

/** Every change of hands across all leases (lib/domain/health.ts isChangeOfHands), newest first. */
export async function listFailovers(store: Store, query: { since?: Date; limit: number; before?: bigint }) {
  const rows = await changeOfHandsCandidates(store, query);
  const failovers = rows
    .slice(0, query.limit)
    .filter(isChangeOfHands)
    .map((row): FailoverView => {
      return { ...toEventView(row), cause: failoverCauseOf(row), restart: isRestart(row) };
    });
  return { failovers, next: rows.length > query.limit ? rows[query.limit - 1]!.id.toString() : null };
}
