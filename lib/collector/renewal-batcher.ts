// Renewals are many (a lease renewing every 10 s is 6 a minute) and nobody waits for them:
// the rows of leases whose only change is a renewal, their raw samples and the per-minute
// rollups are written in one batch a second. A minute's rollup is written once, when the
// minute is over, not at every renewal in it.
import type { TrackedLease } from '../domain/observe';
import { minuteOf, rollupRenewals, type RenewalPoint } from '../domain/renewal-stats';
import type { Clock } from '../time/clock';
import type { WriteBatch } from '../db/observer-writes';

export const RENEWAL_FLUSH_MS = 1_000;
/** Renewals are estimated to have happened up to a poll before they are seen: a minute is complete this long after it ends. */
const MINUTE_SETTLES_MS = 5_000;

export type DueRenewals = Pick<WriteBatch, 'dirty' | 'renewals' | 'rollups'>;

export class RenewalBatcher {
  private readonly leases = new Map<string, TrackedLease>();
  private renewals: WriteBatch['renewals'] = [];
  /** Renewal points per lease and minute, until the minute is over. */
  private readonly minutes = new Map<string, Map<number, RenewalPoint[]>>();

  constructor(private readonly clock: Clock) {}

  /** Leases whose only change is a renewal wait for the next batch, with the renewals seen. */
  add(renewedOnly: Iterable<TrackedLease>, renewals: WriteBatch['renewals']): void {
    for (const lease of renewedOnly) this.leases.set(lease.id, lease);
    this.renewals.push(...renewals);
  }

  /** Leases written now with a state change need no renewal-only write. */
  forget(written: readonly TrackedLease[]): void {
    for (const lease of written) this.leases.delete(lease.id);
  }

  /** What is due: lease rows, raw renewals and the rollups of minutes that are over (every minute when `closing`); null when nothing is. */
  take(closing = false): DueRenewals | null {
    if (this.renewals.length === 0 && this.leases.size === 0 && this.minutes.size === 0) return null;
    const dirty = [...this.leases.values()];
    const renewals = this.renewals;
    this.renewals = [];
    this.leases.clear();
    return { dirty, renewals, rollups: this.rollups(renewals, closing) };
  }

  /** Every RENEWAL_FLUSH_MS until the signal aborts or `stopped`: `flush` what is due. */
  async run(signal: AbortSignal, stopped: () => boolean, flush: () => Promise<void>): Promise<void> {
    while (!signal.aborted && !stopped()) {
      await this.clock.sleep(RENEWAL_FLUSH_MS, signal);
      await flush();
    }
  }

  private rollups(renewals: WriteBatch['renewals'], closing: boolean): WriteBatch['rollups'] {
    for (const { lease, renewal } of renewals) {
      const minute = minuteOf(renewal.atWall);
      let perLease = this.minutes.get(lease.id);
      if (!perLease) this.minutes.set(lease.id, (perLease = new Map()));
      let points = perLease.get(minute);
      if (!points) perLease.set(minute, (points = []));
      points.push({ intervalMs: renewal.intervalMs, marginMs: renewal.marginMs });
    }
    const current = minuteOf(this.clock.wall() - MINUTE_SETTLES_MS);
    const rollups: WriteBatch['rollups'] = [];
    for (const [leaseId, perLease] of this.minutes) {
      for (const [minute, points] of perLease) {
        if (minute >= current && !closing) continue;
        const stats = rollupRenewals(points);
        if (stats) rollups.push({ leaseId, minute, stats });
        perLease.delete(minute);
      }
      if (perLease.size === 0) this.minutes.delete(leaseId);
    }
    return rollups;
  }
}

/** Due renewals cut into pieces of at most `rows` rows in all, in order: lease rows, then samples, then rollups. */
export function piecesOf(due: DueRenewals, rows: number): DueRenewals[] {
  const pieces: DueRenewals[] = [];
  let piece: DueRenewals = { dirty: [], renewals: [], rollups: [] };
  let size = 0;
  const add = <K extends keyof DueRenewals>(key: K, items: DueRenewals[K]) => {
    for (const item of items) {
      if (size === rows) {
        pieces.push(piece);
        piece = { dirty: [], renewals: [], rollups: [] };
        size = 0;
      }
      (piece[key] as unknown[]).push(item);
      size += 1;
    }
  };
  add('dirty', due.dirty);
  add('renewals', due.renewals);
  add('rollups', due.rollups);
  if (size > 0 || pieces.length === 0) pieces.push(piece);
  return pieces;
}
