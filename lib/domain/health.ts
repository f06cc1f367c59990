// How worried to be about a lease, from what the API says of it. Pure: the console's
// "problems first" order, its colours and its counters all come from here, so that the
// page, the tests and the API agree on what a problem is.
import type { LeaseView } from './types';

export const PROBLEMS = ['expired', 'stale', 'unknown', 'late', 'flapping', 'unfenced'] as const;
export type Problem = (typeof PROBLEMS)[number];

/**
 * A renewal is late when less than this share of the TTL was left before it. client-go's
 * defaults (15 s lease, 10 s renew deadline, 2 s retry) renew with about 87% left; a holder
 * renewing with under a quarter left is one slow GC pause or network blip from losing it.
 */
export const LATE_MARGIN_RATIO = 0.25;
/**
 * How far off a renewal's margin may be, by backend. etcd reports a lease's TTL in whole
 * seconds, so a margin read from it is known to a second; a renewal is called late only when
 * it is late even at the generous end (a false page at 3 a.m. is worse than a late one).
 */
export const MARGIN_PRECISION_MS: Record<string, number> = { etcd: 1_000 };
/** A lease that changed hands this many times in the last hour is flapping. */
export const FLAPPING_TRANSITIONS = 4;

/** Event types that change who holds a lease. */
export const TRANSITION_TYPES = ['acquired', 'released', 'expired', 'taken_over', 'force_expired', 'force_released'] as const;

/**
 * Whether an event is a change of hands, as "changes in the last hour" and flapping count them:
 * a transition, except the collector's first sighting of a lease (an `acquired` event with
 * detail.firstSeen), which is Leasehold starting to look, not the lease moving.
 */
export function isChangeOfHands(event: { type: string; detail?: unknown }): boolean {
  if (!(TRANSITION_TYPES as readonly string[]).includes(event.type)) return false;
  const detail = event.detail as { firstSeen?: unknown } | null | undefined;
  return !(detail && typeof detail === 'object' && detail.firstSeen === true);
}

export type RenewalHealth = 'good' | 'late' | 'none';

export type LeaseHealth = {
  problems: Problem[];
  /** The last renewal's margin as a percentage of the TTL, or null when unknown. */
  marginPercent: number | null;
  renewal: RenewalHealth;
};

type HealthInput = Pick<LeaseView, 'backend' | 'state' | 'stale' | 'holder' | 'token' | 'fenced' | 'ttlMs' | 'lastMarginMs' | 'recentTransitions'>;

export function leaseHealth(lease: HealthInput): LeaseHealth {
  const problems: Problem[] = [];
  const marginPercent =
    lease.state === 'held' && lease.lastMarginMs !== null && lease.ttlMs ? Math.max(0, Math.min(100, (lease.lastMarginMs / lease.ttlMs) * 100)) : null;
  const precision = ((MARGIN_PRECISION_MS[lease.backend] ?? 0) / (lease.ttlMs ?? Infinity)) * 100;
  const renewal: RenewalHealth = marginPercent === null ? 'none' : marginPercent + precision < LATE_MARGIN_RATIO * 100 ? 'late' : 'good';
  if (lease.state === 'expired') problems.push('expired');
  if (lease.stale) problems.push('stale');
  if (lease.state === 'unknown') problems.push('unknown');
  if (renewal === 'late') problems.push('late');
  if ((lease.recentTransitions ?? 0) >= FLAPPING_TRANSITIONS) problems.push('flapping');
  if (lease.state === 'held' && lease.token === null) problems.push('unfenced');
  return { problems, marginPercent, renewal };
}

/** Most worrying first: the first problem's rank, then how many problems. */
export function problemRank(health: LeaseHealth): number {
  if (health.problems.length === 0) return PROBLEMS.length;
  return PROBLEMS.indexOf(health.problems[0]!) - Math.min(health.problems.length - 1, 0.5);
}

export type LeaseCounters = { held: number; free: number; expired: number; stale: number; problems: number };

export function countLeases(leases: readonly HealthInput[]): LeaseCounters {
  const counters: LeaseCounters = { held: 0, free: 0, expired: 0, stale: 0, problems: 0 };
  for (const lease of leases) {
    if (lease.stale) counters.stale++;
    else if (lease.state === 'held') counters.held++;
    else if (lease.state === 'free') counters.free++;
    else if (lease.state === 'expired') counters.expired++;
    if (leaseHealth(lease).problems.length > 0) counters.problems++;
  }
  return counters;
}
