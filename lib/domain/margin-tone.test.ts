import { describe, expect, it } from 'vitest';
import { leaseHealth, marginTone } from './health';

const held = (lastMarginMs: number | null, ttlMs = 10_000, backend: 'redis' | 'etcd' = 'redis') =>
  leaseHealth({ backend, state: 'held', stale: false, holder: 'a', token: '1', fenced: true, ttlMs, lastMarginMs, recentTransitions: 0 });

describe('marginTone: one colour for a margin, on the overview and the lease page alike', () => {
  it.each([
    [9_000, 'ok'],
    [5_000, 'ok'], // half the TTL left: healthy
    [4_999, 'warn'], // closer than half: a warning, not late yet
    [2_500, 'warn'],
    [2_499, 'bad'], // under a quarter: late
    [0, 'bad'],
    [null, 'muted'], // no renewal seen yet
  ] as const)('%s ms left of 10 s → %s', (margin, tone) => {
    expect(marginTone(held(margin))).toBe(tone);
  });

  it("etcd's margins, known to a second, are judged a second generously before they are late", () => {
    expect(marginTone(held(2_000, 10_000, 'etcd'))).toBe('warn');
    expect(marginTone(held(2_000, 10_000, 'redis'))).toBe('bad');
  });
});
