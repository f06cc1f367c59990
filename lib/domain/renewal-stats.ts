// Renewal statistics: the raw renewals of a lease are rolled up per minute (count, and
// min/p50/p99/max of the interval between renewals and of the margin left before expiry).

export type RenewalPoint = { intervalMs: number; marginMs: number };

export type RenewalRollup = {
  count: number;
  intervalMin: number;
  intervalP50: number;
  intervalP99: number;
  intervalMax: number;
  marginMin: number;
  marginP50: number;
  marginP99: number;
  marginMax: number;
};

export const MINUTE_MS = 60_000;

/** The start of the minute `atWall` falls in (epoch ms). */
export function minuteOf(atWall: number): number {
  return Math.floor(atWall / MINUTE_MS) * MINUTE_MS;
}

/** Nearest-rank percentile of an ascending list (p in 0..100). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) throw new RangeError('percentile of an empty list');
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export function rollupRenewals(points: readonly RenewalPoint[]): RenewalRollup | null {
  if (points.length === 0) return null;
  const intervals = points.map((p) => p.intervalMs).sort((a, b) => a - b);
  const margins = points.map((p) => p.marginMs).sort((a, b) => a - b);
  return {
    count: points.length,
    intervalMin: intervals[0]!,
    intervalP50: percentile(intervals, 50),
    intervalP99: percentile(intervals, 99),
    intervalMax: intervals.at(-1)!,
    marginMin: margins[0]!,
    marginP50: percentile(margins, 50),
    marginP99: percentile(margins, 99),
    marginMax: margins.at(-1)!,
  };
}

/** The margin as a percentage of the TTL, or null without a TTL. */
export function marginPercent(marginMs: number, ttlMs: number | null): number | null {
  return ttlMs && ttlMs > 0 ? Math.round((marginMs / ttlMs) * 1000) / 10 : null;
}

/** A renewal is late when less than this share of the TTL was left (client-go renews at 2/3 of it). */
export const LATE_RENEWAL_PERCENT = 20;
