import { describe, expect, it } from 'vitest';
import { MAX_FULL_READ_DEADLINE_MS, nextFullReadDeadlineMs, readDeadlineMs } from '@/lib/collector/observe-source';

describe('read deadlines', () => {
  it('a read: twice the poll interval, at least 5 s, at most 30 s', () => {
    expect(readDeadlineMs(1_000)).toBe(5_000);
    expect(readDeadlineMs(10_000)).toBe(20_000);
    expect(readDeadlineMs(60_000)).toBe(30_000);
  });

  it('a full read of a large source: three times its last good read, so that reading 100,000 keys for 7 s is not an outage', () => {
    expect(nextFullReadDeadlineMs(5_000, null)).toBe(5_000);
    expect(nextFullReadDeadlineMs(5_000, { ok: true, durationMs: 40 })).toBe(5_000);
    expect(nextFullReadDeadlineMs(5_000, { ok: true, durationMs: 7_465 })).toBe(22_395);
    expect(nextFullReadDeadlineMs(5_000, { ok: true, durationMs: 120_000 })).toBe(MAX_FULL_READ_DEADLINE_MS);
  });

  it('after a read that ran out of time: twice as long, so that a slow source that answers is read in the end (a hung one stays down)', () => {
    let deadline = 5_000;
    const seen = [];
    for (let i = 0; i < 6; i++) {
      deadline = nextFullReadDeadlineMs(5_000, { ok: false, timedOutAfterMs: deadline });
      seen.push(deadline);
    }
    expect(seen).toEqual([10_000, 20_000, 40_000, 60_000, 60_000, 60_000]);
  });
});
