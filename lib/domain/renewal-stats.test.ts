import { describe, expect, it } from 'vitest';
import { marginPercent, minuteOf, percentile, rollupRenewals } from './renewal-stats';

describe('renewal statistics', () => {
  it.each([
    { list: [5], p: 50, expected: 5 },
    { list: [1, 2, 3, 4], p: 50, expected: 2 },
    { list: [1, 2, 3, 4], p: 99, expected: 4 },
    { list: Array.from({ length: 100 }, (_, i) => i + 1), p: 99, expected: 99 },
    { list: Array.from({ length: 100 }, (_, i) => i + 1), p: 50, expected: 50 },
  ])('nearest-rank p$p of $list.length values is $expected', ({ list, p, expected }) => {
    expect(percentile(list, p)).toBe(expected);
  });

  it('rolls a minute of renewals up', () => {
    const points = [10_000, 10_100, 9_900, 15_000].map((intervalMs, i) => ({ intervalMs, marginMs: 20_000 - i * 1_000 }));
    expect(rollupRenewals(points)).toEqual({
      count: 4,
      intervalMin: 9_900,
      intervalP50: 10_000,
      intervalP99: 15_000,
      intervalMax: 15_000,
      marginMin: 17_000,
      marginP50: 18_000,
      marginP99: 20_000,
      marginMax: 20_000,
    });
    expect(rollupRenewals([])).toBeNull();
  });

  it('minutes and margins', () => {
    expect(minuteOf(Date.UTC(2026, 11, 2, 6, 0, 59, 999))).toBe(Date.UTC(2026, 11, 2, 6, 0));
    expect(marginPercent(7_500, 30_000)).toBe(25);
    expect(marginPercent(100, null)).toBeNull();
  });
});
