// Read models for pages and the API: rows from the store, shaped as DESIGN.md section 5.
import type { Store } from '../db';
import type { Prisma } from '../generated/prisma/client';
import { ms, toEventView, toLeaseView } from '../db/lease-views';
import type { EventType, LeaseEventView, LeaseState, LeaseView } from '../domain/types';
import { CHANGE_TYPES, isChangeOfHands, isRestart } from '../domain/health';
import { failoverCauseOf, type FailoverCause } from '../domain/failover-stats';

export type LeaseFilter = { source?: string; state?: LeaseState; q?: string; limit?: number };

/** Where one lease list starts and what it holds. */
export type LeaseList = { leases: LeaseView[]; total: number; truncated: boolean };

const sourceFreshness = async (store: Store) =>
  new Map((await store.prisma.source.findMany({ select: { name: true, lastGoodReadAt: true } })).map((s) => [s.name, s.lastGoodReadAt]));

export async function listLeases(store: Store, filter: LeaseFilter = {}): Promise<LeaseList> {
  const where: Prisma.LeaseWhereInput = {
    sourceName: filter.source,
    state: filter.state,
    ...(filter.q
      ? { OR: [{ key: { contains: filter.q, mode: 'insensitive' } }, { holder: { contains: filter.q, mode: 'insensitive' } }, { lastHolder: { contains: filter.q, mode: 'insensitive' } }] }
      : {}),
  };
  const limit = filter.limit ?? 10_000;
  const [rows, total, fresh, recent] = await Promise.all([
    store.prisma.lease.findMany({ where, orderBy: [{ sourceName: 'asc' }, { key: 'asc' }], take: limit }),
    store.prisma.lease.count({ where }),
    sourceFreshness(store),
    recentTransitions(store),
  ]);
  const now = Date.now();
  return {
    leases: rows.map((row) => toLeaseView(row, now, fresh.get(row.sourceName) ?? null, recent.get(row.id) ?? 0)),
    total,
    truncated: total > rows.length,
  };
}

const HOUR_MS = 3_600_000;

/** Per lease, how many times it changed hands in the last hour (leases with none are absent; first sightings do not count). */
async function recentTransitions(store: Store, leaseId?: string): Promise<Map<string, number>> {
  const events = await store.prisma.leaseEvent.findMany({
    where: { at: { gte: new Date(Date.now() - HOUR_MS) }, type: { in: [...CHANGE_TYPES] }, ...(leaseId ? { leaseId } : {}) },
    select: { leaseId: true, type: true, holder: true, previousHolder: true, detail: true },
  });
  const counts = new Map<string, number>();
  for (const event of events) if (isChangeOfHands(event)) counts.set(event.leaseId, (counts.get(event.leaseId) ?? 0) + 1);
  return counts;
}

/** When the lease was first seen, as far as the store still knows: its oldest event kept. */
export async function leaseFirstSeenAt(store: Store, id: string): Promise<string | null> {
  const first = await store.prisma.leaseEvent.findFirst({ where: { leaseId: id }, orderBy: { seq: 'asc' }, select: { at: true } });
  return first?.at.toISOString() ?? null;
}

export async function getLease(store: Store, id: string): Promise<LeaseView | null> {
  const row = await store.prisma.lease.findUnique({ where: { id } });
  if (!row) return null;
  const [source, recent] = await Promise.all([
    store.prisma.source.findUnique({ where: { name: row.sourceName }, select: { lastGoodReadAt: true } }),
    recentTransitions(store, id),
  ]);
  return toLeaseView(row, Date.now(), source?.lastGoodReadAt ?? null, recent.get(id) ?? 0);
}

export type EventQuery = { since?: Date; types?: EventType[]; before?: bigint; limit: number };
export type EventPage = { events: LeaseEventView[]; next: string | null };

/** A lease's events, newest first; `next` is the cursor of the following page. */
export async function listLeaseEvents(store: Store, leaseId: string, query: EventQuery): Promise<EventPage> {
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
  return { events: page.map(toEventView), next: rows.length > query.limit ? page.at(-1)!.id.toString() : null };
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
  const rows = await store.prisma.leaseEvent.findMany({
    where: {
      ...(query.since ? { at: { gte: query.since } } : {}),
      ...(query.before !== undefined ? { id: { lt: query.before } } : {}),
      OR: [{ type: 'taken_over' }, { type: 'acquired', previousHolder: { not: null } }],
    },
    orderBy: { id: 'desc' },
    take: query.limit + 1,
  });
  const failovers = rows
    .slice(0, query.limit)
    .filter(isChangeOfHands)
    .map((row): FailoverView => {
      return { ...toEventView(row), cause: failoverCauseOf(row), restart: isRestart(row) };
    });
  return { failovers, next: rows.length > query.limit ? rows[query.limit - 1]!.id.toString() : null };
}
