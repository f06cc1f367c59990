// Failovers as the console shows them: their causes in words, the filter of the failovers
// page (the same on the page and in the CSV export), the gap summary, the time buckets of
// the chart and the CSV rows. Time comes in as an argument.
import { toCsv } from './csv';
import { FORCE_CAUSE_TEXT, FORCE_EVENT_TYPES } from './admin-actions';
import { percentile } from './renewal-stats';
import { LEASE_KINDS, type LeaseEventView, type LeaseKind } from './types';

export const FAILOVER_CAUSES = ['expired', 'taken_over', 'released', ...FORCE_EVENT_TYPES, 'unknown'] as const;
export type FailoverCause = (typeof FAILOVER_CAUSES)[number];

export const CAUSE_TEXT: Record<FailoverCause, string> = {
  expired: 'expired (missed renewal)',
  taken_over: 'taken over',
  released: 'released',
  ...FORCE_CAUSE_TEXT,
  unknown: 'cause unknown',
};

/** The fields of a failover (GET /api/v1/failovers: an event, with its cause) this module reads. */
export type FailoverRecord = Pick<LeaseEventView, 'id' | 'leaseId' | 'at' | 'holder' | 'previousHolder' | 'token' | 'previousToken' | 'gapMs'> & {
  cause: FailoverCause;
  /** The same node under a new instance (lib/domain/health.ts isRestart), not another node. */
  restart?: boolean;
  /** The lease's kind: a scheduler's lock, a leader election, an advisory lock. */
  kind?: LeaseKind;
};

/** The failovers page's lease kinds, as a person reads them. */
export const FAILOVER_KIND_TEXT: Record<LeaseKind, string> = { election: 'leader elections', lock: 'locks', advisory: 'advisory locks' };

export function parseLeaseKind(raw: string | null | undefined): LeaseKind | null {
  return (LEASE_KINDS as readonly string[]).includes(raw ?? '') ? (raw as LeaseKind) : null;
}

/** Who took the lease: another node, or the same node started again. */
export const FAILOVER_CHANGES = ['other', 'restart'] as const;
export type FailoverChange = (typeof FAILOVER_CHANGES)[number];
export const CHANGE_TEXT: Record<FailoverChange, string> = { other: 'another node took over', restart: 'same node, restarted' };

export function parseChange(raw: string | null | undefined): FailoverChange | null {
  return (FAILOVER_CHANGES as readonly string[]).includes(raw ?? '') ? (raw as FailoverChange) : null;
}

/**
 * Why a change of hands (health.ts isChangeOfHands) happened: a takeover is its own cause; an
 * acquisition carries how the previous grant ended (the collector pairs them), or "unknown".
 */
export function failoverCauseOf(event: { type: string; detail: unknown }): FailoverCause {
  if (event.type === 'taken_over') return 'taken_over';
  return parseCause((event.detail as { cause?: string } | null)?.cause) ?? 'unknown';
}

export function parseCause(raw: string | null | undefined): FailoverCause | null {
  return (FAILOVER_CAUSES as readonly string[]).includes(raw ?? '') ? (raw as FailoverCause) : null;
}

/** `text`: part of the lease id, the new or the old holder (any case). `cause`: exactly that cause. `change`: another node, or a restart. `kind`: the lease's kind. */
export type FailoverFilter = { text?: string | null; cause?: FailoverCause | null; change?: FailoverChange | null; kind?: LeaseKind | null };

export function isFiltered(filter: FailoverFilter): boolean {
  return Boolean(filter.text?.trim()) || Boolean(filter.cause) || Boolean(filter.change) || Boolean(filter.kind);
}

export function matchesFailover(failover: FailoverRecord, filter: FailoverFilter): boolean {
  if (filter.cause && failover.cause !== filter.cause) return false;
  if (filter.kind && failover.kind !== filter.kind) return false;
  if (filter.change && (filter.change === 'restart') !== (failover.restart === true)) return false;
  const text = filter.text?.trim().toLowerCase();
  if (!text) return true;
  return [failover.leaseId, failover.holder, failover.previousHolder].some((value) => value !== null && value.toLowerCase().includes(text));
}

export function filterFailovers<T extends FailoverRecord>(failovers: readonly T[], filter: FailoverFilter): T[] {
  return isFiltered(filter) ? failovers.filter((failover) => matchesFailover(failover, filter)) : [...failovers];
}

export type GapSummary = {
  count: number;
  /** How many had a measured gap (a takeover may have none). */
  measured: number;
  /** Nearest-rank median of the measured gaps; null when none was measured. */
  medianGapMs: number | null;
  maxGapMs: number | null;
};

export function summarizeGaps(failovers: readonly Pick<FailoverRecord, 'gapMs'>[]): GapSummary {
  const gaps = failovers
    .map((failover) => failover.gapMs)
    .filter((gap): gap is number => gap !== null && Number.isFinite(gap))
    .sort((a, b) => a - b);
  return {
    count: failovers.length,
    measured: gaps.length,
    medianGapMs: gaps.length ? percentile(gaps, 50) : null,
    maxGapMs: gaps.length ? gaps[gaps.length - 1]! : null,
  };
}

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
/** Bucket widths people read easily; the chart picks the smallest that gives at most `maxBuckets` bars. */
export const BUCKET_STEPS_MS = [
  10 * SECOND, 30 * SECOND, MINUTE, 2 * MINUTE, 5 * MINUTE, 10 * MINUTE, 15 * MINUTE, 30 * MINUTE,
  HOUR, 2 * HOUR, 3 * HOUR, 4 * HOUR, 6 * HOUR, 12 * HOUR, 24 * HOUR,
] as const;

export function bucketSizeFor(rangeMs: number, maxBuckets = 48): number {
  return BUCKET_STEPS_MS.find((step) => rangeMs / step <= maxBuckets) ?? BUCKET_STEPS_MS[BUCKET_STEPS_MS.length - 1]!;
}

export type FailoverBucket = { start: number; end: number; total: number; counts: Record<FailoverCause, number> };

const zeroCounts = (): Record<FailoverCause, number> => Object.fromEntries(FAILOVER_CAUSES.map((cause) => [cause, 0])) as Record<FailoverCause, number>;

/**
 * Counts per bucket of `bucketMs` (aligned to multiples of it since the epoch) from
 * `endMs - rangeMs` to `endMs`. A failover outside the window (the browser's clock differs
 * from the server's, which chose the range) counts in the first or last bucket, so every
 * failover given is plotted; one with an unreadable time is left out.
 */
export function bucketFailovers(
  failovers: readonly Pick<FailoverRecord, 'at' | 'cause'>[],
  window: { endMs: number; rangeMs: number; bucketMs: number },
): FailoverBucket[] {
  const { endMs, rangeMs, bucketMs } = window;
  if (!(bucketMs > 0) || !(rangeMs > 0)) throw new RangeError('bucketFailovers needs a positive range and bucket size');
  const first = Math.floor((endMs - rangeMs) / bucketMs) * bucketMs;
  const last = Math.floor(endMs / bucketMs) * bucketMs;
  const buckets: FailoverBucket[] = [];
  for (let start = first; start <= last; start += bucketMs) buckets.push({ start, end: start + bucketMs, total: 0, counts: zeroCounts() });
  for (const failover of failovers) {
    const at = Date.parse(failover.at);
    if (Number.isNaN(at)) continue;
    const index = Math.min(buckets.length - 1, Math.max(0, Math.floor((at - first) / bucketMs)));
    const bucket = buckets[index]!;
    bucket.total += 1;
    bucket.counts[failover.cause in bucket.counts ? failover.cause : 'unknown'] += 1;
  }
  return buckets;
}

export const FAILOVER_CSV_HEADER = [
  'at',
  'lease',
  'cause',
  'cause_text',
  'previous_holder',
  'previous_token',
  'holder',
  'token',
  'gap_ms',
  'event_id',
  'restart',
] as const;

export function failoversToCsv(failovers: Iterable<FailoverRecord>): string {
  const rows = (function* () {
    for (const f of failovers) {
      yield [f.at, f.leaseId, f.cause, CAUSE_TEXT[f.cause] ?? f.cause, f.previousHolder, f.previousToken, f.holder, f.token, f.gapMs, f.id, f.restart ? 'true' : 'false'];
    }
  })();
  return toCsv(FAILOVER_CSV_HEADER, rows);
}
