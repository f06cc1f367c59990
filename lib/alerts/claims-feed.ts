// Holders' claims, fed to the alert rules: twice a second the engine reads the claims holders
// reported since it last looked (HolderClaim, written by POST /api/v1/telemetry in whichever
// process serves it) and hands the rules those on leases this process observes, each with
// the observer's current picture of the lease. The split_brain and late_holder rules judge
// them (lib/domain/alert-rules/).
import type { Store } from '../db';
import { claimsReportedAfter, type ClaimReport } from '../db/telemetry';
import type { AlertInput, LeaseFacts } from '../domain/alert-rules';
import type { TrackedLease } from '../domain/tracked-lease';
import { parseLeaseId } from '../domain/lease-id';

/** Reports are read again this far back: a transaction that committed late with an earlier reportedAt is not missed. */
const OVERLAP_MS = 5_000;
const PAGE = 5_000;

export class ClaimsFeed {
  /** Each source this process observes: its leases by key (the observer's own map). */
  private readonly sources = new Map<string, ReadonlyMap<string, TrackedLease>>();
  private cursor: Date | null = null;
  /**
   * What was handed on: (lease, holder) → the reportedAt of its report and of its lateness
   * (ms), so that an overlap is not fed twice, nor a lateness already judged.
   */
  private readonly fed = new Map<string, { at: number; lateAt: number }>();

  constructor(
    private readonly store: Store,
    private readonly factsOf: (lease: TrackedLease) => LeaseFacts,
  ) {}

  watch(source: string, leases: ReadonlyMap<string, TrackedLease>): void {
    this.sources.set(source, leases);
  }

  forget(source: string): void {
    this.sources.delete(source);
  }

  /** The claims reported since the last call, as inputs; `nowMono`/`nowWall` turn the claims' wall times into the observer's clock. */
  async read(nowMono: number, nowWall: number): Promise<AlertInput[]> {
    if (this.sources.size === 0) return [];
    // The first read starts a minute back: claims standing now were reported within it (a claim without claimForMs stands 30 s).
    const from = this.cursor === null ? new Date(nowWall - 60_000) : new Date(this.cursor.getTime() - OVERLAP_MS);
    const inputs: AlertInput[] = [];
    for (const report of await claimsReportedAfter(this.store, from, PAGE)) {
      if (this.cursor === null || report.reportedAt > this.cursor) this.cursor = report.reportedAt;
      const input = this.input(report, nowMono, nowWall);
      if (input) inputs.push(input);
    }
    if (this.cursor === null) this.cursor = from;
    const forgetBefore = this.cursor.getTime() - 2 * OVERLAP_MS;
    for (const [id, { at }] of this.fed) if (at < forgetBefore) this.fed.delete(id);
    return inputs;
  }

  private input(report: ClaimReport, nowMono: number, nowWall: number): AlertInput | null {
    const id = `${report.leaseId}\u0000${report.holder}`;
    const at = report.reportedAt.getTime();
    const before = this.fed.get(id);
    if (before && before.at >= at) return null;
    // A lateness is judged once: when it is newer than the last judged, and recent (a claim
    // reported again long after carries its old lateness along).
    const lateAt = report.lateReportedAt?.getTime() ?? -Infinity;
    const lateIsNew = lateAt > (before?.lateAt ?? -Infinity) && lateAt >= this.cursor!.getTime() - 2 * OVERLAP_MS;
    this.fed.set(id, { at, lateAt: Math.max(lateAt, before?.lateAt ?? -Infinity) });
    let lease: TrackedLease | undefined;
    try {
      const { source, key } = parseLeaseId(report.leaseId);
      lease = this.sources.get(source)?.get(key);
    } catch {
      return null; // not a lease id: nothing of ours
    }
    if (!lease) return null;
    const mono = (wall: Date | null) => (report.claims && wall ? nowMono + (wall.getTime() - nowWall) : null);
    return { type: 'claim', lease: this.factsOf(lease), holder: report.holder, token: report.token, claims: report.claims, claimsSinceMono: mono(report.claimsSince), claimUntilMono: mono(report.claimUntil), lateMaxMs: lateIsNew ? report.lateMaxMs : null, ttlMs: report.ttlMs };
  }
}
