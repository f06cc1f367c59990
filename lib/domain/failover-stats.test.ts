import { describe, expect, it } from 'vitest';
import {
  bucketFailovers,
  bucketSizeFor,
  failoverCauseOf,
  failoversToCsv,
  filterFailovers,
  isFiltered,
  parseCause,
  summarizeGaps,
  type FailoverFilter,
  type FailoverRecord,
} from './failover-stats';

const T0 = Date.UTC(2026, 11, 2, 6, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString();

function failover(overrides: Partial<FailoverRecord> = {}): FailoverRecord {
  return {
    id: '1',
    leaseId: 'redis-main/lock:weekly-digest',
    at: iso(T0),
    holder: 'worker-3',
    previousHolder: 'worker-7',
    token: '1043',
    previousToken: '1042',
    gapMs: 1_500,
    cause: 'expired',
    ...overrides,
  };
}

describe('failover filter', () => {
  const list = [
    failover({ id: '1', leaseId: 'redis-main/lock:weekly-digest', holder: 'worker-3', previousHolder: 'worker-7', cause: 'expired' }),
    failover({ id: '2', leaseId: 'pg-main/leases/billing', holder: 'Billing-A', previousHolder: null, cause: 'taken_over' }),
    failover({ id: '3', leaseId: 'etcd-main/election/api', holder: null, previousHolder: 'node-1', cause: 'force_released' }),
    failover({ id: '4', leaseId: 'redis-main/fleet/server-12', holder: 'server-12:70f95754', previousHolder: 'server-12:109b8a2c', cause: 'expired', restart: true }),
  ];
  it.each<{ name: string; filter: FailoverFilter; ids: string[] }>([
    { name: 'no filter keeps everything', filter: {}, ids: ['1', '2', '3', '4'] },
    { name: 'blank text keeps everything', filter: { text: '   ' }, ids: ['1', '2', '3', '4'] },
    { name: 'another node took over', filter: { change: 'other' }, ids: ['1', '2', '3'] },
    { name: 'the same node, restarted', filter: { change: 'restart' }, ids: ['4'] },
    { name: 'restarts by cause', filter: { change: 'restart', cause: 'taken_over' }, ids: [] },
    { name: 'text matches the lease id', filter: { text: 'weekly' }, ids: ['1'] },
    { name: 'text matches the new holder, any case', filter: { text: 'billing-a' }, ids: ['2'] },
    { name: 'text matches the old holder', filter: { text: 'node-1' }, ids: ['3'] },
    { name: 'text matches the source part of an id', filter: { text: 'pg-main/' }, ids: ['2'] },
    { name: 'cause alone', filter: { cause: 'taken_over' }, ids: ['2'] },
    { name: 'cause and text must both match', filter: { cause: 'expired', text: 'billing' }, ids: [] },
    { name: 'no match', filter: { text: 'nobody' }, ids: [] },
  ])('$name', ({ filter, ids }) => {
    expect(filterFailovers(list, filter).map((f) => f.id)).toEqual(ids);
  });

  it.each([
    { raw: 'expired', expected: 'expired' },
    { raw: 'force_released', expected: 'force_released' },
    { raw: 'EXPIRED', expected: null },
    { raw: '', expected: null },
    { raw: null, expected: null },
    { raw: 'acquired', expected: null },
  ])('cause "$raw" parses to $expected', ({ raw, expected }) => {
    expect(parseCause(raw)).toBe(expected);
  });

  it.each<{ filter: FailoverFilter; expected: boolean }>([
    { filter: {}, expected: false },
    { filter: { text: ' ' }, expected: false },
    { filter: { text: 'a' }, expected: true },
    { filter: { cause: 'released' }, expected: true },
  ])('isFiltered($filter) is $expected', ({ filter, expected }) => {
    expect(isFiltered(filter)).toBe(expected);
  });
});

describe('gap summary', () => {
  it.each([
    { name: 'nothing', gaps: [], expected: { count: 0, measured: 0, medianGapMs: null, maxGapMs: null } },
    { name: 'one gap', gaps: [400], expected: { count: 1, measured: 1, medianGapMs: 400, maxGapMs: 400 } },
    { name: 'unsorted gaps', gaps: [3_000, 100, 2_000], expected: { count: 3, measured: 3, medianGapMs: 2_000, maxGapMs: 3_000 } },
    { name: 'null gaps are counted but not measured', gaps: [null, 500, null, 0], expected: { count: 4, measured: 2, medianGapMs: 0, maxGapMs: 500 } },
    { name: 'only null gaps', gaps: [null, null], expected: { count: 2, measured: 0, medianGapMs: null, maxGapMs: null } },
  ])('$name', ({ gaps, expected }) => {
    expect(summarizeGaps(gaps.map((gapMs) => ({ gapMs })))).toEqual(expected);
  });
});

describe('chart buckets', () => {
  it.each([
    { range: '15m', rangeMs: 15 * 60_000, bucketMs: 30_000 },
    { range: '1h', rangeMs: 3_600_000, bucketMs: 2 * 60_000 },
    { range: '6h', rangeMs: 6 * 3_600_000, bucketMs: 10 * 60_000 },
    { range: '24h', rangeMs: 24 * 3_600_000, bucketMs: 30 * 60_000 },
    { range: '7d', rangeMs: 7 * 24 * 3_600_000, bucketMs: 4 * 3_600_000 },
    { range: '1y (beyond the steps)', rangeMs: 365 * 24 * 3_600_000, bucketMs: 24 * 3_600_000 },
  ])('a range of $range is bucketed by $bucketMs ms', ({ rangeMs, bucketMs }) => {
    expect(bucketSizeFor(rangeMs)).toBe(bucketMs);
  });

  it('aligns buckets to the bucket size and covers the whole window', () => {
    const endMs = T0 + 90_000; // 06:01:30
    const buckets = bucketFailovers([], { endMs, rangeMs: 3 * 60_000, bucketMs: 60_000 });
    expect(buckets.map((b) => iso(b.start))).toEqual([
      '2026-12-02T05:58:00.000Z',
      '2026-12-02T05:59:00.000Z',
      '2026-12-02T06:00:00.000Z',
      '2026-12-02T06:01:00.000Z',
    ]);
    expect(buckets.every((b) => b.end - b.start === 60_000 && b.total === 0)).toBe(true);
  });

  it.each([
    { name: 'inside the window', at: iso(T0 + 10_000), index: 2 },
    { name: 'on a bucket boundary', at: iso(T0 + 60_000), index: 3 },
    { name: 'before the window (clock skew) goes to the first bucket', at: iso(T0 - 3_600_000), index: 0 },
    { name: 'after the window (clock skew) goes to the last bucket', at: iso(T0 + 3_600_000), index: 3 },
  ])('a failover $name', ({ at, index }) => {
    const buckets = bucketFailovers([{ at, cause: 'taken_over' }], { endMs: T0 + 90_000, rangeMs: 3 * 60_000, bucketMs: 60_000 });
    expect(buckets.findIndex((b) => b.total === 1)).toBe(index);
    expect(buckets[index]!.counts.taken_over).toBe(1);
  });

  it('counts per cause and leaves out unreadable times', () => {
    const buckets = bucketFailovers(
      [
        { at: iso(T0 + 1_000), cause: 'expired' },
        { at: iso(T0 + 2_000), cause: 'expired' },
        { at: iso(T0 + 3_000), cause: 'released' },
        { at: 'not a time', cause: 'expired' },
      ],
      { endMs: T0 + 30_000, rangeMs: 60_000, bucketMs: 60_000 },
    );
    expect(buckets.reduce((sum, b) => sum + b.total, 0)).toBe(3);
    expect(buckets.at(-1)!.counts).toMatchObject({ expired: 2, released: 1, taken_over: 0 });
  });

  it('refuses a bucket size of zero', () => {
    expect(() => bucketFailovers([], { endMs: T0, rangeMs: 60_000, bucketMs: 0 })).toThrow(RangeError);
  });
});

describe('failover CSV', () => {
  it('writes every failover with its cause in code and in words, neutralising untrusted values', () => {
    const csv = failoversToCsv([
      failover({ id: '9', holder: '=cmd|"/c calc"!A1', previousHolder: 'worker,7', gapMs: null, cause: 'force_expired' }),
      failover({ id: '8' }),
      failover({ id: '7', previousHolder: 'worker-3:0000000a', holder: 'worker-3:0000000b', restart: true }),
    ]);
    expect(csv.split('\r\n')).toEqual([
      'at,lease,cause,cause_text,previous_holder,previous_token,holder,token,gap_ms,event_id,restart',
      `${iso(T0)},redis-main/lock:weekly-digest,force_expired,forced expiry,"worker,7",1042,"'=cmd|""/c calc""!A1",1043,,9,false`,
      `${iso(T0)},redis-main/lock:weekly-digest,expired,expired (missed renewal),worker-7,1042,worker-3,1043,1500,8,false`,
      `${iso(T0)},redis-main/lock:weekly-digest,expired,expired (missed renewal),worker-3:0000000a,1042,worker-3:0000000b,1043,1500,7,true`,
      '',
    ]);
  });
});

describe('failoverCauseOf', () => {
  it.each([
    [{ type: 'taken_over', detail: null }, 'taken_over'],
    [{ type: 'acquired', detail: { cause: 'expired' } }, 'expired'],
    [{ type: 'acquired', detail: { cause: 'force_released' } }, 'force_released'],
    [{ type: 'acquired', detail: { cause: 'something else' } }, 'unknown'],
    [{ type: 'acquired', detail: null }, 'unknown'],
  ])('%j is %s', (event, cause) => {
    expect(failoverCauseOf(event)).toBe(cause);
  });
});
