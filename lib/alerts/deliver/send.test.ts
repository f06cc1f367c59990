import { describe, expect, it } from 'vitest';
import { parseRetryAfter, printable } from './send';

const NOW = Date.parse('2026-03-01T12:00:00Z');

describe('parseRetryAfter', () => {
  it('reads delay-seconds', () => {
    expect(parseRetryAfter('7', NOW)).toBe(7000);
    expect(parseRetryAfter(' 0 ', NOW)).toBe(0);
    expect(parseRetryAfter(['120', '5'], NOW)).toBe(120_000);
  });

  it('reads an HTTP date (IMF-fixdate and the obsolete forms)', () => {
    expect(parseRetryAfter('Sun, 01 Mar 2026 12:00:30 GMT', NOW)).toBe(30_000);
    expect(parseRetryAfter('Sunday, 01-Mar-26 12:01:00 GMT', NOW)).toBe(60_000);
    expect(parseRetryAfter('Sun Mar  1 12:00:05 2026', NOW - new Date(NOW).getTimezoneOffset() * 60_000)).not.toBeNull();
  });

  it('takes a date in the past as now', () => {
    expect(parseRetryAfter('Sun, 01 Mar 2026 11:00:00 GMT', NOW)).toBe(0);
  });

  it('caps both forms at an hour', () => {
    expect(parseRetryAfter('86400', NOW)).toBe(3_600_000);
    expect(parseRetryAfter('99999999999999999999', NOW)).toBe(3_600_000);
    expect(parseRetryAfter('Mon, 02 Mar 2026 12:00:00 GMT', NOW)).toBe(3_600_000);
  });

  it('ignores what it cannot read', () => {
    for (const value of [undefined, null, '', '  ', '-5', '1.5', '12abc', 'soon', 'Sun, 99 Foo 2026']) {
      expect(parseRetryAfter(value as string | undefined, NOW)).toBeNull();
    }
  });
});

describe('printable', () => {
  it('makes one line without control or invisible characters', () => {
    expect(printable('error:\r\n\tbad\u0007 thing\u202e here\u0000', 100)).toBe('error: bad thing here');
  });

  it('cuts to the length it is given', () => {
    expect(printable('x'.repeat(5000), 100)).toHaveLength(100);
  });
});
