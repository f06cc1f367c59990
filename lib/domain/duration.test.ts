import { describe, expect, it } from 'vitest';
import { formatDuration } from './duration';

describe('formatDuration, the one duration formatter', () => {
  it.each([
    [0, '0 ms'],
    [850, '850 ms'],
    [999.6, '1.0 s'],
    [4_000, '4.0 s'],
    [9_949, '9.9 s'],
    [12_400, '12 s'],
    [59_400, '59 s'],
    [59_600, '1 min'],
    [90_000, '1 min 30 s'],
    [3_600_000, '1 h'],
    [3_660_000, '1 h 1 min'],
    [3_661_000, '1 h 1 min'],
    [40 * 86_400_000, '40 d'],
    [-1_200, '-1.2 s'],
    [Number.NaN, '—'],
    [Number.POSITIVE_INFINITY, '—'],
  ])('%s ms is "%s"', (ms, text) => expect(formatDuration(ms)).toBe(text));

  it('says up to msBelow in milliseconds (alert summaries: margins and gaps up to 10 s)', () => {
    expect(formatDuration(1_200, { msBelow: 10_000 })).toBe('1200 ms');
    expect(formatDuration(9_999, { msBelow: 10_000 })).toBe('9999 ms');
    expect(formatDuration(12_500, { msBelow: 10_000 })).toBe('13 s');
  });
});
