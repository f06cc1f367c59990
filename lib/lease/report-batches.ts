// What the reporter (reporter.ts) keeps until it is sent: per holder and lease, the renewals
// and the claim; and how they are packed into requests within the endpoint's limits.
import type { LeaseTiming } from './timings';

export type LeaseReporterStats = {
  /** Renewals Leasehold accepted. */
  sent: number;
  /** Renewals dropped: refused by Leasehold (4xx), pushed out while it could not be reached, or unreportable. */
  dropped: number;
  /** Renewals waiting for the next flush. */
  pending: number;
  /** Posts that failed or were refused. */
  failedPosts: number;
};

/** The endpoint's own limits (docs/api.md, POST /api/v1/telemetry). */
export const TELEMETRY_MAX_RENEWALS = 1_000;
export const TELEMETRY_MAX_REPORTS = 1_000;
export const TELEMETRY_MAX_BYTES = 1_000_000;
const MAX_LEASE_CHARS = 20_000;
const MAX_HOLDER_CHARS = 1_024;
/** Room kept below TELEMETRY_MAX_BYTES for what an estimate misses. */
const BATCH_BYTES = 900_000;
/** The endpoint takes renewals of the last day; older ones are dropped here, with room for clock skew. */
const MAX_RENEWAL_AGE_MS = 23 * 3_600_000;

export type ReportedRenewal = { at: string; rttMs: number; lateMs: number | null; ok: boolean };
export type TelemetryReport = { lease: string; holder: string; token: string | null; ttlMs?: number; claims: boolean; claimForMs?: number; renewals: ReportedRenewal[] };

type Entry = {
  lease: string;
  holder: string;
  token: bigint | null;
  /** The TTL the holder asked for, when a call said. */
  ttlMs: number | null;
  /** Until when (monotonic ms) the client believes it holds the lease, from its last call. */
  claimUntil: number | null;
  /** Until when the application says it holds the lease (LeaseReporter.claim), if it said. */
  appClaimUntil: number | null;
  /** The claim Leasehold last heard from us (null: nothing yet). */
  reportedClaims: boolean | null;
  renewals: ReportedRenewal[];
};

const round1 = (ms: number) => Math.round(ms * 10) / 10;
/** How much longer the entry claims the lease as of `now` (monotonic ms): 0 when it does not. */
const claimLeft = (entry: Entry, now: number) => Math.max(0, (entry.claimUntil ?? -Infinity) - now, (entry.appClaimUntil ?? -Infinity) - now);
const newEntry = (lease: string, holder: string, token: bigint | null): Entry => ({ lease, holder, token, ttlMs: null, claimUntil: null, appClaimUntil: null, reportedClaims: null, renewals: [] });
const entryId = (holder: string, lease: string) => `${holder}\u0000${lease}`;
const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/**
 * What waits to be sent: per holder and lease, its renewals and its claim; with the counts
 * of stats(). Renewals are appended in time order, and put back in front when a post fails.
 */
export class Pending {
  readonly entries = new Map<string, Entry>();
  readonly stats: LeaseReporterStats = { sent: 0, dropped: 0, pending: 0, failedPosts: 0 };
  /** Leases (with their holder) not to report until a time (wall ms): refused by Leasehold, or too long to send. */
  private readonly muted = new Map<string, number>();
  /** How many times each was set aside, for a longer wait each time. */
  private readonly refusals = new Map<string, number>();

  constructor(private readonly maxPending: number) {}

  /**
   * Keeps one timing; true when it changed whether the holder claims the lease from what
   * Leasehold last heard. A lease set aside (mute) keeps its claim, for when it is reported
   * again, but not its renewals.
   */
  record(lease: string, timing: LeaseTiming, now: number): boolean {
    const id = entryId(timing.holder, lease);
    const muted = this.isMuted(id, timing.at.getTime());
    let entry = this.entries.get(id);
    if (!entry) {
      // A refused acquire by a holder that never held the lease is not worth a report.
      if (timing.outcome === 'busy') return false;
      entry = newEntry(lease, timing.holder, null);
      this.entries.set(id, entry);
    }
    if (timing.token !== null) entry.token = timing.token;
    entry.ttlMs = timing.ttlMs;
    entry.claimUntil = timing.claims ? timing.claimUntil : null;
    if (timing.call === 'renew' && muted) this.stats.dropped += 1;
    else if (timing.call === 'renew') {
      entry.renewals.push({ at: timing.at.toISOString(), rttMs: round1(timing.rttMs), lateMs: timing.lateMs === null ? null : round1(timing.lateMs), ok: timing.outcome === 'ok' });
      this.stats.pending += 1;
      this.dropOldest();
    }
    return !muted && this.claimChanged(entry, now);
  }

  /** The application's own word on its claim (LeaseReporter.claim); true when that changed what Leasehold last heard. */
  claim(lease: string, holder: string, token: bigint | null, until: number | null, now: number, wallNow: number): boolean {
    const id = entryId(holder, lease);
    let entry = this.entries.get(id);
    if (!entry) {
      if (until === null) return false;
      entry = newEntry(lease, holder, token);
      this.entries.set(id, entry);
    }
    if (token !== null) entry.token = token;
    entry.appClaimUntil = until;
    return !this.isMuted(id, wallNow) && this.claimChanged(entry, now);
  }

  private claimChanged(entry: Entry, now: number): boolean {
    return claimLeft(entry, now) > 0 !== (entry.reportedClaims ?? false);
  }

  /**
   * Stops reporting a holder's lease until `until` (wall ms), dropping its pending renewals;
   * its claim is kept and said again when the lease is reported again. Never again
   * (Infinity): the entry goes. Answers how many times it has been set aside.
   */
  mute(report: Pick<TelemetryReport, 'lease' | 'holder'>, until: number | ((refusals: number) => number)): number {
    const id = entryId(report.holder, report.lease);
    if (this.muted.size >= 10_000) this.muted.clear(); // bounded: forgetting a mute only costs one more refusal
    if (this.refusals.size >= 10_000) this.refusals.clear();
    const refusals = (this.refusals.get(id) ?? 0) + 1;
    this.refusals.set(id, refusals);
    this.muted.set(id, typeof until === 'number' ? until : until(refusals));
    const entry = this.entries.get(id);
    if (!entry) return refusals;
    this.stats.pending -= entry.renewals.length;
    this.stats.dropped += entry.renewals.length;
    entry.renewals = [];
    entry.reportedClaims = null;
    if (this.muted.get(id) === Number.POSITIVE_INFINITY) this.entries.delete(id);
    return refusals;
  }

  private isMuted(id: string, now: number): boolean {
    const until = this.muted.get(id);
    if (until === undefined) return false;
    if (until > now) return true;
    this.muted.delete(id);
    return false;
  }

  /** Puts the renewals of a batch that could not be delivered back in front of their entries. */
  putBack(batch: TelemetryReport[]) {
    for (const report of [...batch].reverse()) {
      const id = entryId(report.holder, report.lease);
      let entry = this.entries.get(id);
      if (!entry) {
        entry = newEntry(report.lease, report.holder, report.token === null ? null : BigInt(report.token));
        this.entries.set(id, entry);
      }
      entry.renewals.unshift(...report.renewals);
      this.stats.pending += report.renewals.length;
      // Leasehold has not heard this claim: say it again next time.
      entry.reportedClaims = null;
    }
    this.dropOldest();
  }

  /**
   * Past maxPending, the oldest renewals go. Each entry's renewals are in time order, so the
   * oldest is at the front of some entry: drop from it while it stays the oldest.
   */
  private dropOldest() {
    while (this.stats.pending > this.maxPending) {
      let oldest: Entry | undefined;
      let runnerUp: string | undefined;
      for (const entry of this.entries.values()) {
        const head = entry.renewals[0]?.at;
        if (head === undefined) continue;
        if (!oldest || head < oldest.renewals[0]!.at) {
          if (oldest) runnerUp = oldest.renewals[0]!.at;
          oldest = entry;
        } else if (runnerUp === undefined || head < runnerUp) runnerUp = head;
      }
      if (!oldest) return;
      let removed = 0;
      while (this.stats.pending - removed > this.maxPending && oldest.renewals.length > removed && (runnerUp === undefined || oldest.renewals[removed]!.at <= runnerUp)) removed += 1;
      oldest.renewals.splice(0, Math.max(1, removed));
      this.stats.pending -= Math.max(1, removed);
      this.stats.dropped += Math.max(1, removed);
    }
  }

  /**
   * The batches to send now, each within the endpoint's limits; the renewals leave their
   * entries. `onlyChangedClaims`: only the entries whose claim started or ended since Leasehold last heard.
   */
  take(now: number, wallNow: number, onError: (error: Error) => void, onlyChangedClaims = false): TelemetryReport[][] {
    const batcher = new Batcher();
    const oldestKept = new Date(wallNow - MAX_RENEWAL_AGE_MS).toISOString();
    for (const [id, entry] of this.entries) {
      if (onlyChangedClaims && !this.claimChanged(entry, now)) continue;
      if (this.isMuted(id, wallNow)) continue;
      const claimForMs = Math.round(claimLeft(entry, now));
      const claims = claimForMs > 0;
      if (entry.claimUntil !== null && entry.claimUntil <= now) entry.claimUntil = null;
      if (entry.appClaimUntil !== null && entry.appClaimUntil <= now) entry.appClaimUntil = null;
      if (entry.renewals.length === 0 && !claims && entry.reportedClaims === false) {
        this.entries.delete(id);
        continue;
      }
      if (entry.lease.length > MAX_LEASE_CHARS || entry.holder.length > MAX_HOLDER_CHARS) {
        onError(new Error(`the lease ${entry.lease.slice(0, 80)}... (held by ${entry.holder.slice(0, 80)}) is longer than Leasehold takes; it is not reported`));
        this.mute(entry, Number.POSITIVE_INFINITY);
        continue;
      }
      const all = entry.renewals.splice(0);
      this.stats.pending -= all.length;
      // Leasehold takes renewals of the last day only: older ones (kept through a long outage) go.
      const renewals = all.filter((renewal) => renewal.at >= oldestKept);
      this.stats.dropped += all.length - renewals.length;
      const head = { lease: entry.lease, holder: entry.holder, token: entry.token === null ? null : entry.token.toString(), ...(entry.ttlMs === null ? {} : { ttlMs: entry.ttlMs }) };
      batcher.add(claims ? { ...head, claims, claimForMs } : { ...head, claims }, renewals);
      entry.reportedClaims = claims;
    }
    return batcher.done();
  }
}

/** Reports packed into requests of at most 1,000 reports, 1,000 renewals and BATCH_BYTES, in order. */
class Batcher {
  private readonly batches: TelemetryReport[][] = [];
  private batch: TelemetryReport[] = [];
  private renewals = 0;
  private bytes = 20;

  /** Adds one report, split over requests when it must be. */
  add(head: Omit<TelemetryReport, 'renewals'>, renewals: ReportedRenewal[]) {
    const headBytes = bytesOf(head) + 20;
    let from = 0;
    for (;;) {
      if (this.batch.length >= TELEMETRY_MAX_REPORTS || this.renewals >= TELEMETRY_MAX_RENEWALS || this.bytes + headBytes > BATCH_BYTES) this.close();
      const part: ReportedRenewal[] = [];
      let bytes = headBytes;
      while (from < renewals.length && this.renewals + part.length < TELEMETRY_MAX_RENEWALS) {
        const size = bytesOf(renewals[from]) + 1;
        if (this.bytes + bytes + size > BATCH_BYTES) break;
        part.push(renewals[from]!);
        bytes += size;
        from += 1;
      }
      this.batch.push({ ...head, renewals: part });
      this.renewals += part.length;
      this.bytes += bytes;
      if (from >= renewals.length) return;
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
