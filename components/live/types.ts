// What the console's client code receives from the API (docs/api.md), and the one
// thing it adds: where a lease's countdown ends on this browser's own clock.
import type { LeaseDetailView, LeaseList } from '@/lib/domain/schemas';
import type { LeaseView } from '@/lib/domain/types';
import type { SourceRow } from '@/lib/queries/console';

/** A lease as the browser keeps it: `localExpiresAt` is Date.now() + remainingMs when it arrived, so a skewed clock does not matter. */
export type LiveLease = LeaseView & { localExpiresAt: number | null };
export type SourceStatusView = Pick<SourceRow, 'name' | 'backend' | 'status' | 'lastGoodReadAt' | 'lastError' | 'lastPollMs'> & Partial<SourceRow>;
/** GET /api/v1/leases (lib/domain/schemas), each lease with its local deadline. `position`: the live stream's position the list is current to (the API's, then moved on as the console applies the stream). */
export type LeaseListResponse = Omit<LeaseList, 'leases'> & { leases: LiveLease[] };
/** GET /api/v1/leases/{id} (lib/domain/schemas) with its local deadline. `firstSeenAt`: the lease's oldest event the store keeps (when Leasehold first saw it, unless pruned since). */
export type LeaseDetail = LeaseDetailView & { localExpiresAt: number | null };

export function withLocalDeadline<T extends LeaseView>(lease: T, now = Date.now()): T & { localExpiresAt: number | null } {
  return { ...lease, localExpiresAt: lease.remainingMs === null ? null : now + lease.remainingMs };
}
