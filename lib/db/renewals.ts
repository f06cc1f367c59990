// A lease's renewals as the lease page charts them: each observed renewal (interval and
// margin) and the per-minute rollups, since a time.
import { ms } from './lease-views';
import type { Store } from './store';
import { readHolderReports } from './telemetry';
import { systemClock } from '../time/clock';

/** Holder reports are kept a day when no `since` is asked for. */
const HOLDER_REPORTS_DEFAULT_MS = 24 * 3_600_000;

/** The renewal samples and per-minute rollups of a lease, oldest first, since `since` (all kept when absent). */
export async function readLeaseRenewals(store: Store, leaseId: string, since?: Date) {
  const [samples, rollups, holders] = await Promise.all([
    store.prisma.renewalSample.findMany({ where: { leaseId, ...(since ? { at: { gte: since } } : {}) }, orderBy: { seq: 'asc' } }),
    store.prisma.renewalRollup.findMany({ where: { leaseId, ...(since ? { minute: { gte: since } } : {}) }, orderBy: { minute: 'asc' } }),
    readHolderReports(store, leaseId, since ?? new Date(systemClock.wall() - HOLDER_REPORTS_DEFAULT_MS)),
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
    holders,
  };
}
