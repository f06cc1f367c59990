import { describe, expect, it } from 'vitest';
import { MAX_FULL_READ_DEADLINE_MS, nextFullReadDeadlineMs, readDeadlineMs } from '@/lib/collector/observe-source';
import { MAX_RECONCILE_EVERY_MS, reconcileDue } from '@/lib/sources/types';

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

describe('reconcile reads while the push stream is live', () => {
  const at = (lastFullMs: number) => ({ lastFullAt: 0, lastFullMs });

  it('every 10 s, or ten polls when that is longer', () => {
    expect(reconcileDue(at(200), 9_999, 1_000)).toBe(false);
    expect(reconcileDue(at(200), 10_000, 1_000)).toBe(true);
    expect(reconcileDue(at(200), 10_000, 2_000)).toBe(false);
    expect(reconcileDue(at(200), 20_000, 2_000)).toBe(true);
  });

  it('never more than a tenth of the time: a full read of 5 s is repeated every 50 s, at most every 120 s', () => {
    expect(reconcileDue(at(5_000), 49_999, 1_000)).toBe(false);
    expect(reconcileDue(at(5_000), 50_000, 1_000)).toBe(true);
    expect(reconcileDue(at(60_000), MAX_RECONCILE_EVERY_MS - 1, 1_000)).toBe(false);
    expect(reconcileDue(at(60_000), MAX_RECONCILE_EVERY_MS, 1_000)).toBe(true);
  });

  it('a source never read in full is due at once', () => {
    expect(reconcileDue({ lastFullAt: -Infinity, lastFullMs: 0 }, 0, 1_000)).toBe(true);
  });
});
