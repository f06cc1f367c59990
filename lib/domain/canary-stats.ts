// Canary round trips as numbers (docs/configuring-sources.md, "Canary leases"). Pure.
//
// Each source's canary times its acquire, renew and release calls. The collector keeps the
// last minute's renewals exactly (RecentRoundTrips, for the slow_renewals rule), and rolls
// every call up per minute into a histogram of fixed, logarithmic buckets: 16 to each
// doubling, from 0.01 ms. A minute's, an hour's or a day's histograms add up, and a percentile
// read from the sum is the upper edge of its bucket (never more than the largest round trip
// seen): at most 4.4 % above the exact figure, never below it.
export type CanaryCall = 'acquire' | 'renew' | 'release';
export const CANARY_CALLS: readonly CanaryCall[] = ['acquire', 'renew', 'release'];

/** Counts per bucket index, only the buckets that have any ("12": 3). */
export type Buckets = Record<string, number>;

/** One call kind's round trips over some span: counts, the failures among them, the sum and the largest. */
export type RoundTripRollup = { count: number; failed: number; sumMs: number; maxMs: number; buckets: Buckets };

export type WindowStats = { count: number; failed: number; p50Ms: number | null; p95Ms: number | null; p99Ms: number | null; maxMs: number | null };

const BASE_MS = 0.01;
const PER_DOUBLING = 16;
/** The last bucket holds everything from about 11 minutes up. */
const LAST_BUCKET = 16 * 26;

/** The bucket a round trip falls in: the smallest i with rttMs <= BASE_MS * 2^(i/16). */
export function bucketOf(rttMs: number): number {
  if (!(rttMs > BASE_MS)) return 0;
  return Math.min(LAST_BUCKET, Math.ceil(PER_DOUBLING * Math.log2(rttMs / BASE_MS) - 1e-9));
}

/** The upper edge of bucket i, in ms. */
export const bucketUpperMs = (i: number): number => BASE_MS * 2 ** (i / PER_DOUBLING);

export const emptyRollup = (): RoundTripRollup => ({ count: 0, failed: 0, sumMs: 0, maxMs: 0, buckets: {} });

/** Adds one round trip to a rollup (in place). A failed call is counted and timed like the others: how long it took to fail. */
export function addRoundTrip(rollup: RoundTripRollup, rttMs: number, ok: boolean): void {
  const rtt = Number.isFinite(rttMs) && rttMs > 0 ? rttMs : 0;
  rollup.count += 1;
  if (!ok) rollup.failed += 1;
  rollup.sumMs += rtt;
  rollup.maxMs = Math.max(rollup.maxMs, rtt);
  const bucket = String(bucketOf(rtt));
  rollup.buckets[bucket] = (rollup.buckets[bucket] ?? 0) + 1;
}

/** The sum of rollups (a new one). Bucket counts read from the store are checked: what is not a count is left out. */
export function mergeRollups(rollups: Iterable<RoundTripRollup>): RoundTripRollup {
  const out = emptyRollup();
  for (const r of rollups) {
    out.count += r.count;
    out.failed += r.failed;
    out.sumMs += r.sumMs;
    out.maxMs = Math.max(out.maxMs, r.maxMs);
    for (const [bucket, n] of Object.entries(r.buckets ?? {})) {
      if (!/^\d{1,3}$/.test(bucket) || !Number.isInteger(n) || n <= 0) continue;
      out.buckets[bucket] = (out.buckets[bucket] ?? 0) + n;
    }
  }
  return out;
}

/** The q-quantile (0 < q <= 1) of a rollup's round trips: its bucket's upper edge, at most the largest seen; null when empty. */
export function quantileOf(rollup: RoundTripRollup, q: number): number | null {
  const entries = Object.entries(rollup.buckets)
    .map(([bucket, n]) => [Number(bucket), n] as const)
    .sort((a, b) => a[0] - b[0]);
  const total = entries.reduce((sum, [, n]) => sum + n, 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (const [bucket, n] of entries) {
    seen += n;
    if (seen >= rank) return round(Math.min(bucketUpperMs(bucket), rollup.maxMs));
  }
  return round(rollup.maxMs);
}

const round = (ms: number) => Math.round(ms * 100) / 100;

export function windowStats(rollup: RoundTripRollup): WindowStats {
  const empty = rollup.count === 0;
  return {
    count: rollup.count,
    failed: rollup.failed,
    p50Ms: quantileOf(rollup, 0.5),
    p95Ms: quantileOf(rollup, 0.95),
    p99Ms: quantileOf(rollup, 0.99),
    maxMs: empty ? null : round(rollup.maxMs),
  };
}

/** The exact q-quantile of a list of round trips (nearest rank); null when empty. */
export function exactQuantile(values: readonly number[], q: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** The round trips of the last `windowMs` (monotonic ms), exactly: what the slow_renewals rule reads its p99 from. */
export class RecentRoundTrips {
  private readonly samples: { at: number; rttMs: number }[] = [];

  constructor(private readonly windowMs = 60_000) {}

  add(atMono: number, rttMs: number): void {
    this.samples.push({ at: atMono, rttMs });
    this.trim(atMono);
  }

  p99(nowMono: number): number | null {
    this.trim(nowMono);
    return exactQuantile(
      this.samples.map((s) => s.rttMs),
      0.99,
    );
  }

  private trim(nowMono: number) {
    let drop = 0;
    while (drop < this.samples.length && this.samples[drop]!.at < nowMono - this.windowMs) drop += 1;
    if (drop > 0) this.samples.splice(0, drop);
  }
}
