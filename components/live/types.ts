// What the console's client code receives from the API (DESIGN.md section 5), and the one
// thing it adds: where a lease's countdown ends on this browser's own clock.
import type { LeaseEventView, LeaseView } from '@/lib/domain/types';
import type { SourceRow } from '@/lib/queries/console';

/** A lease as the browser keeps it: `localExpiresAt` is Date.now() + remainingMs when it arrived, so a skewed clock does not matter. */
export type LiveLease = LeaseView & { localExpiresAt: number | null };
export type SourceStatusView = Pick<SourceRow, 'name' | 'backend' | 'status' | 'lastGoodReadAt' | 'lastError' | 'lastPollMs'> & Partial<SourceRow>;
/** `position`: the live stream's position the list is current to (the API's, then moved on as the console applies the stream). */
export type LeaseListResponse = { leases: LiveLease[]; total: number; truncated: boolean; position?: string; sources: SourceRow[] };
/** `firstSeenAt`: the lease's oldest event the store keeps (when Leasehold first saw it, unless pruned since). */
export type LeaseDetail = LiveLease & { events: LeaseEventView[]; firstSeenAt?: string | null };

export function withLocalDeadline<T extends LeaseView>(lease: T, now = Date.now()): T & { localExpiresAt: number | null } {
  return { ...lease, localExpiresAt: lease.remainingMs === null ? null : now + lease.remainingMs };
}
