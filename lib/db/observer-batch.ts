// What the collector hands the store after a read of a source (observer-writes.ts writes it).
import type { LeaseChange, Renewal, TrackedLease } from '../domain/observe';
import type { RenewalRollup } from '../domain/renewal-stats';
import type { Backend } from '../domain/types';

export class StaleOwnerError extends Error {
  constructor(readonly source: string) {
    super(`source ${source} has a newer owner (another collector, or this one again after it lost its ownership lease): this observer stops writing it`);
    this.name = 'StaleOwnerError';
  }
}

/** What the collector writes of a source's own state (the API's view of a source is lib/queries/console.ts SourceRow). */
export type SourceWrite = {
  name: string;
  backend: Backend;
  status: 'up' | 'down';
  lastGoodReadAt: number | null;
  lastError: string | null;
  lastPollMs: number | null;
  pollMs: number;
  detail: Record<string, unknown> | null;
};

export type WriteBatch = {
  /** The source's row; null for a batch that only adds to leases (renewals), which leaves it as it is. */
  source: SourceWrite | null;
  /** The collector, the fencing token of its ownership of the source, and the source's name (a batch of rollups alone names no lease of it). */
  collector: { id: string; token: bigint; source?: string };
  dirty: TrackedLease[];
  events: { lease: TrackedLease; seq: number; change: LeaseChange }[];
  sourceEvents: { seq: number; type: 'source_down' | 'source_up'; atWall: number; detail: Record<string, unknown> | null }[];
  renewals: { lease: TrackedLease; seq: number; renewal: Renewal }[];
  rollups: { leaseId: string; minute: number; stats: RenewalRollup }[];
  /** Mark every lease of the source stale (source down) or not stale (source back). */
  setStale?: boolean;
  /**
   * Every lease in `dirty` changed only by a renewal since its row was last written (the
   * renewal batches): only the columns a renewal moves are written (lease-rows.ts
   * updateRenewedLeases), and a lease without a row gets its whole row.
   */
  renewedOnly?: boolean;
  ringSize: number;
};

export type WrittenEvent = { id: string; leaseId: string; seq: number };

/** A lease the store would not take as it was, and why (the store's own words). */
export type RefusedLease = { leaseId: string; reason: string };

