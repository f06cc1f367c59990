import { describe, expect, it } from 'vitest';
import { rangeCovering } from '@/components/time-range';

describe("the lease page's range when the URL names none", () => {
  it('the shortest that shows everything observed, from 5 minutes: a lease seen 2 minutes ago fills the chart', () => {
    expect(rangeCovering(2 * 60_000)).toBe('5m');
    expect(rangeCovering(5 * 60_000)).toBe('5m');
    expect(rangeCovering(5 * 60_000 + 1)).toBe('15m');
    expect(rangeCovering(50 * 60_000)).toBe('1h');
    expect(rangeCovering(30 * 24 * 3_600_000)).toBe('7d');
  });
});
