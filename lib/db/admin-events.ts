// The events an admin action writes into a lease's history (its row's eventType,
// lib/domain/admin-actions.ts: force_expired, force_released).
// The collector numbers its own events 1, 2, 3... per lease (LeaseEvent.seq, unique with the
// lease); an admin event takes the negative of its audit entry's id as its seq, so the two
// never collide and the collector's numbering is untouched. The collector records what it
// then sees (the lease freed, the next grant) as it always does.
import type { ForceEventType } from '../domain/admin-actions';
import type { Store } from './store';

export type AdminLeaseEvent = {
  leaseId: string;
  type: ForceEventType;
  at: Date;
  previousHolder: string;
  previousToken: string | null;
  newToken: string | null;
  auditId: bigint;
  detail: Record<string, unknown>;
};

export async function appendAdminLeaseEvent(store: Store, event: AdminLeaseEvent): Promise<void> {
  await store.prisma.leaseEvent.createMany({
    data: [
      {
        leaseId: event.leaseId,
        seq: -Number(event.auditId),
        type: event.type,
        at: event.at,
        holder: null,
        previousHolder: event.previousHolder,
        token: event.newToken,
        previousToken: event.previousToken,
        detail: { ...event.detail, auditId: event.auditId.toString() },
      },
    ],
    skipDuplicates: true,
  });
}
