import { describe, expect, it } from 'vitest';
import { remainingMsAt, remainingMsOf } from './countdown';
import { leavesWindowAt, recentChangeCounts, recentChangesOfHands, RECENT_WINDOW_MS, stillRecent } from './recent-changes';

const NOW = Date.parse('2026-12-05T10:00:00.000Z');
const at = (msAgo: number) => new Date(NOW - msAgo);

describe('changes of hands in the last hour', () => {
  const events = [
    { leaseId: 'r/a', at: at(10 * 60_000), type: 'taken_over', holder: 'w2', previousHolder: 'w1' },
    { leaseId: 'r/a', at: at(2 * 60_000), type: 'acquired', holder: 'w3', previousHolder: 'w2', detail: { cause: 'expired' } },
    { leaseId: 'r/a', at: at(RECENT_WINDOW_MS + 1), type: 'taken_over', holder: 'w1', previousHolder: 'w0' }, // out of the hour
    { leaseId: 'r/b', at: at(60_000), type: 'acquired', holder: 'w1', previousHolder: null }, // nobody before: none
    { leaseId: 'r/c', at: at(60_000), type: 'acquired', holder: 'w1', previousHolder: 'w0', detail: { firstSeen: true } }, // first sighting: none
    { leaseId: 'r/d', at: at(60_000).toISOString(), type: 'acquired', holder: 'w1', previousHolder: 'w1' }, // the same holder: none
  ];

  it('counts each change once, per lease, oldest first, within the hour', () => {
    expect(recentChangesOfHands(events, NOW)).toEqual(new Map([['r/a', [NOW - 10 * 60_000, NOW - 2 * 60_000]]]));
    expect(recentChangeCounts(events, NOW)).toEqual(new Map([['r/a', 2]]));
  });

  it('lets changes leave the hour as time passes', () => {
    const times = recentChangesOfHands(events, NOW).get('r/a')!;
    expect(stillRecent(times, NOW)).toBe(times);
    expect(leavesWindowAt(times)).toBe(NOW - 10 * 60_000 + RECENT_WINDOW_MS);
    expect(stillRecent(times, leavesWindowAt(times) + 1)).toEqual([NOW - 2 * 60_000]);
    expect(leavesWindowAt([])).toBe(Infinity);
  });
});

describe('time left on a lease', () => {
  it('is whole milliseconds, never below 0, and only while counting down', () => {
    expect(remainingMsAt(NOW + 1_500.6, NOW)).toBe(1_501);
    expect(remainingMsAt(NOW - 5, NOW)).toBe(0);
    expect(remainingMsOf({ state: 'held', stale: false, expiresAtMs: NOW + 10 }, NOW)).toBe(10);
    expect(remainingMsOf({ state: 'held', stale: true, expiresAtMs: NOW + 10 }, NOW)).toBeNull();
    expect(remainingMsOf({ state: 'free', stale: false, expiresAtMs: NOW + 10 }, NOW)).toBeNull();
    expect(remainingMsOf({ state: 'held', stale: false, expiresAtMs: null }, NOW)).toBeNull();
  });
});
