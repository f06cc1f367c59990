import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_ATTEMPTS, retryDelayMs } from './backoff';

describe('retryDelayMs', () => {
  it('draws in [0, base·2^attempt] (full jitter)', () => {
    expect(retryDelayMs(0, { random: () => 0 })).toBe(0);
    expect(retryDelayMs(0, { random: () => 0.999999 })).toBe(1000);
    expect(retryDelayMs(3, { random: () => 0.5 })).toBe(4000);
    expect(retryDelayMs(3, { baseMs: 500, random: () => 1 })).toBe(4000);
  });

  it('never grows past maxMs, however many attempts', () => {
    expect(retryDelayMs(20, { random: () => 1 })).toBe(300_000);
    expect(retryDelayMs(5000, { random: () => 1 })).toBe(300_000);
    expect(retryDelayMs(10, { maxMs: 60_000, random: () => 0.5 })).toBe(30_000);
  });

  it('stays within its bounds for any draw', () => {
    for (let attempt = 0; attempt < 30; attempt++) {
      for (let i = 0; i < 50; i++) {
        const delay = retryDelayMs(attempt);
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(delay).toBeLessThanOrEqual(Math.min(300_000, 1000 * 2 ** attempt));
        expect(Number.isInteger(delay)).toBe(true);
      }
    }
  });

  it('is never less than the receiver’s Retry-After', () => {
    expect(retryDelayMs(0, { retryAfterMs: 7000, random: () => 0.5 })).toBe(7000);
    expect(retryDelayMs(10, { retryAfterMs: 7000, random: () => 1 })).toBe(300_000);
    // A Retry-After above maxMs is still honoured: the receiver knows when it is ready.
    expect(retryDelayMs(1, { retryAfterMs: 3_600_000, random: () => 0 })).toBe(3_600_000);
    expect(retryDelayMs(0, { retryAfterMs: null, random: () => 0 })).toBe(0);
  });

  it('refuses a negative attempt', () => {
    expect(() => retryDelayMs(-1)).toThrow(/from 0 up/);
    expect(() => retryDelayMs(Number.NaN)).toThrow(/from 0 up/);
  });

  it('gives up after a handful of attempts by default', () => {
    expect(DEFAULT_MAX_ATTEMPTS).toBe(8);
  });
});
