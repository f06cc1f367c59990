// How worried to be about a lease, from what the API says of it. Pure: the console's
// "problems first" order, its colours and its counters all come from here, so that the
// page, the tests and the API agree on what a problem is.
import { FORCE_EVENT_TYPES } from './admin-actions';
import type { LeaseView } from './types';
import { isQuarantined } from './quarantine';

export const PROBLEMS = ['expired', 'stale', 'unknown', 'late', 'flapping', 'unfenced', 'quarantined'] as const;
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
/**
 * Below this share of the TTL left at its last renewal, a margin is shown as a warning: not
 * late yet, but closer than a healthy holder's. One rule for every page that colours a margin.
 */
export const CLOSE_MARGIN_RATIO = 0.5;

/** A lease that changed hands this many times in the last hour is flapping. */
export const FLAPPING_TRANSITIONS = 4;

/** Event types that change who holds a lease (each is one side of a change of hands, or both). */
export const TRANSITION_TYPES = ['acquired', 'released', 'expired', 'taken_over', ...FORCE_EVENT_TYPES] as const;

/** The event types that can be a change of hands (for a query to narrow by before isChangeOfHands decides). */
export const CHANGE_TYPES = ['acquired', 'taken_over'] as const;

type ChangeInput = { type: string; holder?: string | null; previousHolder?: string | null; detail?: unknown };

/**
 * Whether an event is a change of hands (a failover): a lease going from one holder to another,
 * counted once. That is a `taken_over`, or an `acquired` paired with how the previous grant
 * ended (expired, released, forced) by a different holder. The end on its own (`expired`,
 * `released`, `force_*`) is the first half of a change of hands, not one more; an acquisition
 * by the same holder, after an observation gap (nobody to pair it with), or the collector's
 * first sighting is none. "Changes in the last hour", flapping, the failovers page and its
 * counter all count this, on the server, in the stream and in the CLI.
 */
export function isChangeOfHands(event: ChangeInput): boolean {
  const detail = event.detail as { firstSeen?: unknown } | null | undefined;
  if (detail && typeof detail === 'object' && detail.firstSeen === true) return false;
  if (event.type === 'taken_over') return true;
  return event.type === 'acquired' && event.previousHolder != null && event.previousHolder !== event.holder;
}

/**
 * lib/lease records a holder as "<name>:<instance>", the instance 8 hex digits drawn per client:
 * the same name with a new instance is the same node started again (or a second process
 * under its name), not another node. Holders not of that form are never taken for restarts.
 */
const INSTANCE_HOLDER = /^(.+):[0-9a-f]{8}$/;

/** Whether a change of hands went to the same node under a new instance (a restart), as far as the holders' form says. */
export function isRestart(event: ChangeInput): boolean {
  if (!isChangeOfHands(event)) return false;
  const before = INSTANCE_HOLDER.exec(event.previousHolder ?? '');
  const after = INSTANCE_HOLDER.exec(event.holder ?? '');
  return before !== null && after !== null && before[1] === after[1];
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
  // A fenced lease in quarantine (a ZooKeeper quarantine holds no token) is not unfenced.
  if (lease.state === 'held' && lease.token === null && !(isQuarantined(lease) && lease.fenced)) problems.push('unfenced');
  if (isQuarantined(lease)) problems.push('quarantined');
  return { problems, marginPercent, renewal };
}

export type Tone = 'ok' | 'warn' | 'bad' | 'muted';

/** The colour of a lease's last renewal margin: late is bad, close is a warning, no renewal seen is muted. */
export function marginTone(health: Pick<LeaseHealth, 'renewal' | 'marginPercent'>): Tone {
  if (health.renewal === 'late') return 'bad';
  if (health.marginPercent === null) return 'muted';
  return health.marginPercent < CLOSE_MARGIN_RATIO * 100 ? 'warn' : 'ok';
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
