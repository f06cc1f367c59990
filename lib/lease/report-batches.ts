// What the reporter (reporter.ts) keeps until it is sent: per holder and lease, the renewals
// and the claim; and how they are packed into requests within the endpoint's limits.
import type { LeaseTiming } from './timings';

export type LeaseReporterStats = {
  /** Renewals Leasehold accepted. */
  sent: number;
  /** Renewals dropped: refused by Leasehold (4xx) or pushed out while it could not be reached. */
  dropped: number;
  /** Renewals waiting for the next flush. */
  pending: number;
  /** Posts that failed or were refused. */
  failedPosts: number;
};


/** The endpoint's own limits (docs/api.md, POST /api/v1/telemetry): renewals in one request, and its body's size. */
export const TELEMETRY_MAX_RENEWALS = 1_000;
export const TELEMETRY_MAX_BYTES = 1_000_000;
/** Room kept below TELEMETRY_MAX_BYTES for what an estimate misses. */
const BATCH_BYTES = 900_000;

export type ReportedRenewal = { at: string; rttMs: number; lateMs: number | null; ok: boolean };
export type TelemetryReport = { lease: string; holder: string; token: string | null; claims: boolean; renewals: ReportedRenewal[] };

type Entry = {
  lease: string;
  holder: string;
  token: bigint | null;
  claimUntil: number | null;
  /** The claim Leasehold last heard from us (null: nothing yet). */
  reportedClaims: boolean | null;
  renewals: ReportedRenewal[];
};

const round1 = (ms: number) => Math.round(ms * 10) / 10;
const entryId = (holder: string, lease: string) => `${holder}\u0000${lease}`;

/**
 * What waits to be sent: per holder and lease, its renewals and its claim; with the counts
 * of stats(). Renewals are appended in time order, and put back in front when a post fails.
 */
export class Pending {
  readonly entries = new Map<string, Entry>();
  readonly stats: LeaseReporterStats = { sent: 0, dropped: 0, pending: 0, failedPosts: 0 };

  constructor(private readonly maxPending: number) {}

  record(lease: string, timing: LeaseTiming) {
    const id = entryId(timing.holder, lease);
    let entry = this.entries.get(id);
    if (!entry) {
      // A refused acquire by a holder that never held the lease is not worth a report.
      if (timing.outcome === 'busy') return;
      entry = { lease, holder: timing.holder, token: null, claimUntil: null, reportedClaims: null, renewals: [] };
      this.entries.set(id, entry);
    }
    if (timing.token !== null) entry.token = timing.token;
    entry.claimUntil = timing.claims ? timing.claimUntil : null;
    if (timing.call !== 'renew') return;
    entry.renewals.push({ at: timing.at.toISOString(), rttMs: round1(timing.rttMs), lateMs: timing.lateMs === null ? null : round1(timing.lateMs), ok: timing.outcome === 'ok' });
    this.stats.pending += 1;
    this.dropOldest();
  }

  /** Puts the renewals of a batch that could not be delivered back in front of their entries. */
  putBack(batch: TelemetryReport[]) {
    for (const report of [...batch].reverse()) {
      const id = entryId(report.holder, report.lease);
      let entry = this.entries.get(id);
      if (!entry) {
        entry = { lease: report.lease, holder: report.holder, token: report.token === null ? null : BigInt(report.token), claimUntil: null, reportedClaims: null, renewals: [] };
        this.entries.set(id, entry);
      }
      entry.renewals.unshift(...report.renewals);
      this.stats.pending += report.renewals.length;
      // Leasehold has not heard this claim: say it again next time.
      entry.reportedClaims = null;
    }
    this.dropOldest();
  }

  /** Past maxPending, the oldest renewals go (the oldest is at the front of some entry). */
  private dropOldest() {
    while (this.stats.pending > this.maxPending) {
      let oldest: Entry | undefined;
      for (const entry of this.entries.values()) {
        if (entry.renewals.length > 0 && (!oldest || entry.renewals[0]!.at < oldest.renewals[0]!.at)) oldest = entry;
      }
      if (!oldest) return;
      const removed = oldest.renewals.splice(0, Math.min(this.stats.pending - this.maxPending, oldest.renewals.length)).length;
      this.stats.pending -= removed;
      this.stats.dropped += removed;
    }
  }

  /** The batches to send now, each within the endpoint's limits; the renewals leave their entries. */
  take(now: number, onError: (error: Error) => void): TelemetryReport[][] {
    const batcher = new Batcher();
    for (const [id, entry] of this.entries) {
      const claims = entry.claimUntil !== null && now < entry.claimUntil;
      if (!claims) entry.claimUntil = null;
      if (entry.renewals.length === 0 && !claims && entry.reportedClaims === false) {
        this.entries.delete(id);
        continue;
      }
      const renewals = entry.renewals.splice(0);
      this.stats.pending -= renewals.length;
      const head = { lease: entry.lease, holder: entry.holder, token: entry.token === null ? null : entry.token.toString(), claims };
      if (!batcher.add(head, renewals)) {
        // A lease id or holder this long cannot be reported within the endpoint's limit.
        this.entries.delete(id);
        this.stats.dropped += renewals.length;
        onError(new Error(`the lease ${entry.lease.slice(0, 80)}... is too long to report; its renewals are dropped`));
        continue;
      }
      entry.reportedClaims = claims;
    }
    return batcher.done();
  }
}

/** Reports packed into requests of at most TELEMETRY_MAX_RENEWALS renewals and BATCH_BYTES, in order. */
class Batcher {
  private readonly batches: TelemetryReport[][] = [];
  private batch: TelemetryReport[] = [];
  private renewals = 0;
  private bytes = 20;

  /** Adds one report (split over requests when it must be); false when its head alone is too big. */
  add(head: Omit<TelemetryReport, 'renewals'>, renewals: ReportedRenewal[]): boolean {
    const headBytes = JSON.stringify(head).length + 20;
    if (headBytes > BATCH_BYTES / 2) return false;
    let from = 0;
    for (;;) {
      if (this.renewals >= TELEMETRY_MAX_RENEWALS || this.bytes + headBytes > BATCH_BYTES) this.close();
      const part: ReportedRenewal[] = [];
      let bytes = headBytes;
      while (from < renewals.length && this.renewals + part.length < TELEMETRY_MAX_RENEWALS) {
        const size = JSON.stringify(renewals[from]).length + 1;
        if (this.bytes + bytes + size > BATCH_BYTES) break;
        part.push(renewals[from]!);
        bytes += size;
        from += 1;
      }
      this.batch.push({ ...head, renewals: part });
      this.renewals += part.length;
      this.bytes += bytes;
      if (from >= renewals.length) return true;
      this.close();
    }
  }

  done(): TelemetryReport[][] {
    this.close();
    return this.batches;
  }

  private close() {
    if (this.batch.length > 0) this.batches.push(this.batch);
    this.batch = [];
    this.renewals = 0;
    this.bytes = 20;
  }
}

