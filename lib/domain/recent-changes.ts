// "Changes of hands in the last hour" (a lease's recentTransitions, the flapping rule's count,
// the per-lease series on /metrics), counted in one place: the store's read models
// (lib/queries/leases.ts) and the lease list served from memory (lib/queries/lease-cache.ts)
// both ask this. What one change of hands is, is health.ts isChangeOfHands. Pure: the clock is
// passed in.
import { isChangeOfHands } from './health';

/** How far back "recent" reaches. */
export const RECENT_WINDOW_MS = 3_600_000;

/** The oldest moment still recent at `now`. */
export const recentSince = (now: number) => now - RECENT_WINDOW_MS;

type EventLike = { leaseId: string; at: Date | string | number; type: string; holder?: string | null; previousHolder?: string | null; detail?: unknown };

const msOf = (at: Date | string | number) => (typeof at === 'number' ? at : typeof at === 'string' ? Date.parse(at) : at.getTime());

/**
 * Per lease, the times (wall-clock ms, oldest first) of its changes of hands within the hour
 * before `now`; a lease with none is absent.
 */
export function recentChangesOfHands(events: Iterable<EventLike>, now: number): Map<string, number[]> {
  const since = recentSince(now);
  const times = new Map<string, number[]>();
  for (const event of events) {
    const at = msOf(event.at);
    if (at < since || !isChangeOfHands(event)) continue;
    let list = times.get(event.leaseId);
    if (!list) times.set(event.leaseId, (list = []));
    list.push(at);
  }
  for (const list of times.values()) list.sort((a, b) => a - b);
  return times;
}

/** How many changes of hands each lease had within the hour (leases with none absent). */
export function recentChangeCounts(events: Iterable<EventLike>, now: number): Map<string, number> {
  return new Map([...recentChangesOfHands(events, now)].map(([id, times]) => [id, times.length]));
}

/** Those of `times` (oldest first) still within the hour at `now`: the same array when none fell out. */
export function stillRecent(times: number[], now: number): number[] {
  const since = recentSince(now);
  return times.length && times[0]! < since ? times.filter((at) => at >= since) : times;
}

/** When the oldest of `times` (oldest first) leaves the hour; Infinity for none. */
export function leavesWindowAt(times: readonly number[]): number {
  return times.length ? times[0]! + RECENT_WINDOW_MS : Infinity;
}
