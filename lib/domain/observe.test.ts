import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isChangeOfHands as isFailover } from './health';
import { diffLease, MAX_WALL_MS, MIN_WALL_MS, type LeaseChange, type Observation, type ReadContext, type TrackedLease } from './observe';

const read = (mono: number, extra: Partial<ReadContext> = {}): ReadContext => ({
  source: 'redis-main',
  backend: 'redis',
  startedMono: mono,
  startedWall: 1_800_000_000_000 + mono,
  afterGap: false,
  ...extra,
});
const held = (holder: string, token: number | null, remainingMs: number | null, extra: Partial<Observation> = {}): Observation => ({
  key: 'lock:digest',
  kind: 'lock',
  holder,
  token: token === null ? null : BigInt(token),
  ttlMs: 30_000,
  remainingMs,
  candidates: [],
  ...extra,
});

/** Feeds reads one after another; returns every change, tagged with the read's time. */
function replay(steps: [number, Observation | undefined, Partial<ReadContext>?][]) {
  let lease: TrackedLease | undefined;
  const changes: (LeaseChange & { at: number })[] = [];
  const renewals: { intervalMs: number; marginMs: number }[] = [];
  for (const [mono, observation, extra] of steps) {
    const result = diffLease(lease, observation, read(mono, extra));
    lease = result.next;
    for (const c of result.changes) changes.push({ ...c, at: c.atWall - 1_800_000_000_000 });
    if (result.renewal) renewals.push({ intervalMs: result.renewal.intervalMs, marginMs: result.renewal.marginMs });
  }
  return { lease: lease!, changes, renewals, types: changes.map((c) => c.type) };
}

describe('diffLease', () => {
  it('first sight of a held lease is an acquisition marked first seen, and not a transition', () => {
    const { types, changes, lease } = replay([[1_000, held('w1', 7, 25_000)]]);
    expect(types).toEqual(['acquired']);
    expect(changes[0]!.detail).toEqual({ firstSeen: true });
    expect(lease).toMatchObject({ state: 'held', holder: 'w1', token: 7n, transitions: 0, expiresAtMono: 26_000 });
  });

  it('a renewal moves the expiry forward: interval and margin come from the TTL, not the poll', () => {
    // Granted at 0 (30 s), renewed at 10 s and 20 s; polled every 3 s.
    const { renewals, types } = replay([
      [1_000, held('w1', 7, 29_000)],
      [4_000, held('w1', 7, 26_000)],
      [11_000, held('w1', 7, 29_000)], // renewed at 10 s with 20 s left
      [22_000, held('w1', 7, 28_000)], // renewed at 20 s with 20 s left
    ]);
    expect(types).toEqual(['acquired']);
    expect(renewals).toEqual([
      { intervalMs: 10_000, marginMs: 20_000 },
      { intervalMs: 10_000, marginMs: 20_000 },
    ]);
  });

  it('whole-second TTLs (etcd) do not look like renewals', () => {
    const coarse = (remaining: number) => held('w1', 7, remaining, { precisionMs: 1_000, ttlMs: 10_000 });
    const { renewals } = replay([
      [0, coarse(9_000)],
      [900, coarse(9_000)],
      [1_800, coarse(8_000)],
      [2_100, coarse(7_000)],
    ]);
    expect(renewals).toEqual([]);
  });

  it('whole-second TTLs (etcd): a renewal that moved the expiry by less than two readings\' precision is still a renewal, and the estimate follows it', () => {
    // Expiry in [9 s, 10 s) at 0; kept alive at 1 s (TTL 10 s): 9.8 s left at 1.2 s reads as 9.
    // The new earliest (10.2 s) is past the old latest (10 s): only a renewal moves it there.
    const coarse = (remaining: number) => held('w1', 7, remaining, { precisionMs: 1_000, ttlMs: 10_000 });
    const { renewals, lease } = replay([
      [0, coarse(9_000)],
      [1_200, coarse(9_000)],
    ]);
    expect(renewals).toHaveLength(1);
    expect(renewals[0]!.marginMs).toBeGreaterThan(8_000);
    expect(lease.expiresAtMono).toBe(10_200);
  });

  it('a renewal dated only by the read that saw it (no TTL) may have come any time since the read before: its margin says so', () => {
    // A table without a TTL column: the expiry moved from 3 s to 5.5 s, seen at a read 2.5 s
    // after the one before. Dated at this read, 0.5 s was left; it may have been up to 3 s.
    const noTtl = (remaining: number) => held('w1', 7, remaining, { ttlMs: null });
    const first = diffLease(undefined, noTtl(3_000), read(0));
    const second = diffLease(first.next, noTtl(3_000), read(2_500));
    expect(second.renewal).toMatchObject({ marginMs: 500, marginUncertaintyMs: 2_500 });
    // With a TTL to date it by, the renewal's time is the earliest it can be: nothing is added.
    const withTtl = diffLease(diffLease(undefined, held('w1', 7, 3_000, { ttlMs: 3_000 }), read(0)).next, held('w1', 7, 2_900, { ttlMs: 3_000 }), read(2_500));
    expect(withTtl.renewal).toMatchObject({ marginUncertaintyMs: 0 });
  });

  it.each([
    { name: 'gone before its expiry: released', goneAt: 5_000, expected: 'released', state: 'free' },
    { name: 'gone after its expiry: expired (a missed renewal)', goneAt: 31_000, expected: 'expired', state: 'expired' },
  ])('$name', ({ goneAt, expected, state }) => {
    const { types, lease, changes } = replay([
      [0, held('w1', 7, 30_000)],
      [goneAt, undefined],
    ]);
    expect(types).toEqual(['acquired', expected]);
    expect(lease).toMatchObject({ state, holder: null, lastHolder: 'w1', lastToken: 7n, transitions: 1 });
    if (expected === 'expired') expect(changes[1]!.at).toBe(30_000);
  });

  it('a lapsed row (owner kept, expiry passed) is expired; a row marked free is released', () => {
    expect(replay([[0, held('w1', 7, 30_000)], [31_000, held('w1', 7, -1_000)]]).types).toEqual(['acquired', 'expired']);
    expect(replay([[0, held('w1', 7, 30_000)], [5_000, { ...held('w1', 7, 0), holder: null, released: true }]]).types).toEqual(['acquired', 'released']);
  });

  it('a lease that ended early (ShedLock moves lock_until back to now) is released', () => {
    expect(replay([[0, held('w1', null, 30_000)], [5_000, held('w1', null, -10)]]).types).toEqual(['acquired', 'released']);
  });

  it('another holder after the old lease expired: expired, then acquired with the gap and the previous holder (a failover)', () => {
    const { changes } = replay([
      [0, held('w1', 7, 30_000)],
      [20_000, held('w1', 7, 10_000)],
      [35_000, held('w2', 8, 28_000)], // granted at 33 s: 3 s without a holder
    ]);
    expect(changes.slice(1).map(({ type, holder, previousHolder, gapMs, at }) => ({ type, holder, previousHolder, gapMs, at }))).toEqual([
      { type: 'expired', holder: null, previousHolder: 'w1', gapMs: null, at: 30_000 },
      { type: 'acquired', holder: 'w2', previousHolder: 'w1', gapMs: 3_000, at: 33_000 },
    ]);
    expect(isFailover(changes[2]!)).toBe(true);
  });

  it('another holder while the old lease was still valid: taken over, no gap', () => {
    const { changes, lease } = replay([
      [0, held('w1', 7, 30_000)],
      [5_000, held('w2', 8, 29_000)],
    ]);
    expect(changes[1]).toMatchObject({ type: 'taken_over', holder: 'w2', previousHolder: 'w1', gapMs: 0 });
    expect(lease).toMatchObject({ holder: 'w2', lastHolder: 'w1', transitions: 1 });
  });

  it('released, then acquired by someone else later: the acquisition carries the gap since the release', () => {
    const { changes } = replay([
      [0, held('w1', 7, 30_000)],
      [5_000, undefined],
      [9_000, held('w2', 8, 29_000)], // granted at 8 s
    ]);
    expect(changes.map((c) => c.type)).toEqual(['acquired', 'released', 'acquired']);
    expect(changes[2]).toMatchObject({ previousHolder: 'w1', gapMs: 3_000, detail: { cause: 'released' } });
  });

  it('the same holder again with a new token is not a failover', () => {
    const { changes } = replay([
      [0, held('w1', 7, 30_000)],
      [5_000, undefined],
      [6_000, held('w1', 8, 30_000)],
    ]);
    expect(isFailover(changes[2]!)).toBe(false);
  });

  it('after a gap in observation, a new holder is an observation gap: no expiry, release or takeover is invented', () => {
    const { types, changes } = replay([
      [0, held('w1', 7, 30_000)],
      [60_000, held('w2', 9, 29_000), { afterGap: true }],
    ]);
    expect(types).toEqual(['acquired', 'observation_gap']);
    expect(changes[1]!.detail).toMatchObject({ before: { holder: 'w1', token: '7' }, after: { holder: 'w2', token: '9' } });
  });

  it('after a gap, a lease that is gone is an observation gap, not a release or an expiry', () => {
    expect(replay([[0, held('w1', 7, 30_000)], [60_000, undefined, { afterGap: true }]]).types).toEqual(['acquired', 'observation_gap']);
  });

  it('a lower token than the last one seen is a token regression, even after a gap', () => {
    expect(replay([[0, held('w1', 9, 30_000)], [40_000, undefined], [41_000, held('w2', 4, 30_000)]]).types).toEqual([
      'acquired',
      'expired',
      'token_regression',
      'acquired',
    ]);
    expect(replay([[0, held('w1', 9, 30_000)], [60_000, held('w2', 4, 30_000), { afterGap: true }]]).types).toContain('token_regression');
  });

  it('a value that cannot be interpreted makes the state unknown and claims nothing', () => {
    const { types, lease } = replay([
      [0, held('w1', 7, 30_000)],
      [5_000, { ...held('w1', 7, 25_000), problem: 'the value is a hash, not a string' }],
    ]);
    expect(types).toEqual(['acquired']);
    expect(lease).toMatchObject({ state: 'unknown', problem: 'the value is a hash, not a string' });
  });

  it('an advisory lock (no TTL) that disappears was released', () => {
    const advisory = (holder: string): Observation => ({ key: 'advisory/42', kind: 'advisory', holder, token: null, ttlMs: null, remainingMs: null, candidates: [] });
    expect(replay([[0, advisory('pid 10')], [1_000, undefined]]).types).toEqual(['acquired', 'released']);
  });
});

describe('diffLease: elections', () => {
  it('the next candidate taking over when the leader expired: expired, then acquired with no gap', () => {
    const election = (holder: string, token: number, remaining: number, candidates: [string, number][] = []): Observation => ({
      key: 'election/digest',
      kind: 'election',
      holder,
      token: BigInt(token),
      ttlMs: 10_000,
      remainingMs: remaining,
      precisionMs: 1_000,
      candidates: candidates.map(([h, t]) => ({ holder: h, token: BigInt(t) })),
    });
    const { changes } = replay([
      [0, election('a', 10, 10_000, [['b', 11]])],
      [5_000, election('a', 10, 5_000, [['b', 11]])],
      // a was killed at 5 s: its lease ran out at 10 s, and b (kept alive all along) leads.
      [11_000, election('b', 11, 9_000)],
    ]);
    expect(changes.slice(1).map(({ type, holder, previousHolder, gapMs, at }) => ({ type, holder, previousHolder, gapMs, at }))).toEqual([
      { type: 'expired', holder: null, previousHolder: 'a', gapMs: null, at: 10_000 },
      { type: 'acquired', holder: 'b', previousHolder: 'a', gapMs: 0, at: 10_000 },
    ]);
  });
});

describe('diffLease: remaining time not known yet', () => {
  it('a held lease whose remaining time is read later gets its expiry then, with no event and no renewal', () => {
    const { types, renewals, lease } = replay([
      [0, held('w1', 7, null, { ttlMs: null })],
      [1_000, held('w1', 7, 20_000, { ttlMs: 30_000 })],
      [2_000, held('w1', 7, 19_000, { ttlMs: 30_000 })],
    ]);
    expect(types).toEqual(['acquired']);
    expect(renewals).toEqual([]);
    expect(lease).toMatchObject({ state: 'held', expiresAtMono: 21_000, ttlMs: 30_000 });
  });
});

describe('diffLease: the same holder with another token is not a change of hands (issue 13, point 8)', () => {
  it.each([
    {
      name: 'a renewal that bumped the token (the lease-table SQL does): a renewal, the new token, no event',
      steps: [
        [0, held('w2', 7, 30_000)],
        [10_000, held('w2', 8, 30_000)],
      ] as [number, Observation][],
      types: ['acquired'],
      token: 8n,
      renewals: 1,
    },
    {
      name: 'a token that went backwards for the same holder: one regression and nothing more',
      steps: [
        [0, held('w2', 7, 30_000)],
        [1_000, held('w2', 5, 29_000)],
      ] as [number, Observation][],
      types: ['acquired', 'token_regression'],
      token: 5n,
      renewals: 0,
    },
    {
      name: 'the same holder acquiring again after its grant ran out: an expiry and an acquisition, no failover',
      steps: [
        [0, held('w2', 7, 5_000)],
        [9_000, held('w2', 8, 29_000)], // expired at 5 s, acquired again at 8 s
      ] as [number, Observation][],
      types: ['acquired', 'expired', 'acquired'],
      token: 8n,
      renewals: 0,
    },
    {
      name: 'a new token seen after the old expiry, with no TTL to date it: the last read saw the old grant still running, so a renewal seen late, not an expiry',
      steps: [
        [0, held('w2', 7, 5_000, { ttlMs: null })],
        [9_000, held('w2', 8, 29_000, { ttlMs: null })], // renewed at any time from 0 s to 9 s
      ] as [number, Observation][],
      types: ['acquired'],
      token: 8n,
      renewals: 1,
    },
  ])('$name', ({ steps, types, token, renewals }) => {
    const result = replay(steps);
    expect(result.types).toEqual(types);
    expect(result.types).not.toContain('taken_over');
    expect(result.changes.filter(isFailover)).toEqual([]);
    expect(result.lease).toMatchObject({ state: 'held', holder: 'w2', token });
    expect(result.renewals).toHaveLength(renewals);
  });

  it('a candidate queued under the same name (etcd proposals need not differ) taking over is still a handover', () => {
    const election = (token: number, remaining: number, candidates: number[] = []): Observation => ({
      key: 'election/digest',
      kind: 'election',
      holder: 'leader',
      token: BigInt(token),
      ttlMs: 10_000,
      remainingMs: remaining,
      precisionMs: 1_000,
      candidates: candidates.map((t) => ({ holder: 'leader', token: BigInt(t) })),
    });
    const { types } = replay([
      [0, election(10, 10_000, [11])],
      [3_000, election(11, 10_000)],
    ]);
    expect(types).toEqual(['acquired', 'released', 'acquired']);
  });
});

describe('diffLease: leases that were not watched are compared across a gap', () => {
  it('a stale lease seen again with another holder: an observation gap, no invented takeover', () => {
    const first = replay([[0, held('w1', 7, 30_000)]]).lease;
    const result = diffLease({ ...first, stale: true }, held('w2', 9, 30_000), read(60_000));
    expect(result.changes.map((c) => c.type)).toEqual(['observation_gap']);
  });

  it('an unreadable row (unknown) that reads again as before: no event at all', () => {
    const { types, lease } = replay([
      [0, held('w1', 7, 30_000)],
      [1_000, held('w1', 7, 29_000, { problem: 'the token column holds "1.5", not a whole number' })],
      [2_000, held('w1', 7, 28_000)],
    ]);
    expect(types).toEqual(['acquired']);
    expect(lease).toMatchObject({ state: 'held', holder: 'w1', problem: null });
  });
});

describe('diffLease: numbers no date can hold (issue 13, point 1)', () => {
  it('a TTL of forty days is kept exactly', () => {
    const forty = 40 * 86_400_000;
    const { lease } = replay([[0, held('w1', 1, forty, { ttlMs: forty })]]);
    expect(lease).toMatchObject({ state: 'held', ttlMs: forty, expiresAtWall: 1_800_000_000_000 + forty });
  });

  it('a Redis PX of 2^62 ms: held with no expiry, the same at every read (no renewal invented), and flagged', () => {
    const huge = 2 ** 62;
    const { lease, renewals, types } = replay([
      [0, held('w1', 1, huge, { ttlMs: null })],
      [1_000, held('w1', 1, huge - 1_000, { ttlMs: null })],
      [2_000, held('w1', 1, huge - 2_000, { ttlMs: null })],
    ]);
    expect(types).toEqual(['acquired']);
    expect(renewals).toEqual([]);
    expect(lease).toMatchObject({ state: 'held', expiresAtWall: null });
    expect(String(lease.detail?.clamped)).toMatch(/more than 27,000 years/);
  });

  it('an expiry in 4000 BC: expired, and its date stays one every store can hold', () => {
    const { lease } = replay([[0, held('w1', 1, -1.8e14, { ttlMs: null })]]);
    expect(lease.state).toBe('expired');
    expect(lease.expiresAtWall).toBe(MIN_WALL_MS);
    expect(new Date(lease.expiresAtWall!).toISOString()).toBe('0001-01-01T00:00:00.000Z');
  });

  it('an election with 5,000 candidates queued keeps the first 100 and says how many there were', () => {
    const candidates = Array.from({ length: 5_000 }, (_, i) => ({ holder: `candidate-${i}`.padEnd(1_000, 'x'), token: BigInt(i + 2) }));
    const { lease, types } = replay([[0, held('w1', 1, 10_000, { kind: 'election', candidates })]]);
    expect(types).toEqual(['acquired']);
    expect(lease.candidates).toHaveLength(100);
    expect(lease.candidates[0]).toEqual(candidates[0]);
    expect(String(lease.detail?.clamped)).toBe('5000 candidates are queued: the first 100 are shown');
  });

  it('a remaining time that is not a number makes the lease unknown, not a crash', () => {
    const { lease, types } = replay([[0, held('w1', 1, Number.NaN)]]);
    expect(lease.state).toBe('unknown');
    expect(types).toEqual([]);
  });

  it('property: whatever the numbers, every wall time is a valid date between the years 1 and 9999', () => {
    const number = fc.oneof(fc.double(), fc.integer(), fc.constantFrom(2 ** 63, -(2 ** 63), Number.MAX_VALUE, 8.64e15, -8.64e15, 0));
    fc.assert(
      fc.property(fc.array(fc.tuple(number, fc.option(number), fc.integer({ min: 0, max: 100 })), { minLength: 1, maxLength: 6 }), (reads) => {
        let lease: TrackedLease | undefined;
        let mono = 0;
        for (const [remaining, ttl, token] of reads) {
          mono += 1_000;
          lease = diffLease(lease, held('w1', token, remaining, { ttlMs: ttl }), read(mono)).next;
          for (const wall of [lease!.expiresAtWall, lease!.acquiredAtWall, lease!.renewedAtWall]) {
            if (wall === null) continue;
            expect(wall).toBeGreaterThanOrEqual(MIN_WALL_MS);
            expect(wall).toBeLessThanOrEqual(MAX_WALL_MS);
          }
          if (lease!.ttlMs !== null) expect(Number.isFinite(lease!.ttlMs)).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });
});
