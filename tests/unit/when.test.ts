// Relative times in the console (components/when.tsx).
import { describe, expect, it } from 'vitest';
import { relativeTime } from '@/components/when';

describe('relativeTime', () => {
  it('says how long ago, or how long until', () => {
    expect(relativeTime(12_000, false)).toBe('12 s ago');
    expect(relativeTime(-4_000, true)).toBe('in 4.0 s');
    expect(relativeTime(500, false)).toBe('just now');
    expect(relativeTime(-500, true)).toBe('just now');
  });

  it('reads an instant that has happened, a little ahead of the page clock (it ticks once a second), as just now', () => {
    // The screenshot that showed it: "Last read: in 1.2 s".
    expect(relativeTime(-1_200, false)).toBe('just now');
    expect(relativeTime(-2_400, false)).toBe('just now');
  });

  it('shows an expiry ahead as it is, and a past instant far ahead (a server clock ahead of this one) as it is', () => {
    expect(relativeTime(-1_200, true)).toBe('in 1.2 s');
    expect(relativeTime(-90_000, false)).toBe('in 1 min 30 s');
  });
});
