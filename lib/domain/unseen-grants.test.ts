import { describe, expect, it } from 'vitest';
import { applyRead } from './apply-read';
import { isChangeOfHands } from './health';
import { diffLease, type LeaseChange, type Observation, type ReadContext, type TrackedLease } from './observe';

const read = (mono: number, extra: Partial<ReadContext> = {}): ReadContext => ({ source: 'redis-main', backend: 'redis', startedMono: mono, startedWall: 1_800_000_000_000 + mono, afterGap: false, ...extra });
/** A Redis lock as the adapter reports it: the token is the fence counter, which is also what was issued. */
const held = (holder: string, token: number, remainingMs = 20_000, counted = true): Observation => ({
  key: 'lock:order',
  kind: 'lock',
  holder,
  token: BigInt(token),
  ttlMs: null,
  remainingMs,
  candidates: [],
  ...(counted ? { issued: BigInt(token) } : {}),
});
/** The lock key is gone; its fence counter says `issued`. */
const gone = (issued: number): Observation => ({ key: 'lock:order', kind: 'lock', holder: null, token: null, ttlMs: null, remainingMs: null, candidates: [], issued: BigInt(issued), gone: true });

function replay(steps: [number, Observation | undefined, Partial<ReadContext>?][]) {
  let lease: TrackedLease | undefined;
  const changes: LeaseChange[] = [];
  for (const [mono, observation, extra] of steps) {
    const result = diffLease(lease, observation, read(mono, extra));
    lease = result.next;
    changes.push(...result.changes);
  }
  return { lease, changes, types: changes.map((c) => c.type) };
}

/** Every token a run of changes accounts for: grants seen held, and the ranges of unseen ones. */
function accountedTokens(changes: LeaseChange[]): bigint[] {
  const tokens: bigint[] = [];
  for (const c of changes) {
    if ((c.type === 'acquired' || c.type === 'taken_over') && c.token !== null && !(c.detail as { firstSeen?: boolean } | null)?.firstSeen) tokens.push(c.token);
    if (c.type === 'unseen_grants') for (let t = c.previousToken! + 1n; t <= c.token!; t++) tokens.push(t);
  }
  return tokens.sort((a, b) => (a < b ? -1 : 1));
}

describe('grants that came and went between two reads', () => {
  it('a lock let go, then taken and let go three more times before the next read: released, then three unseen grants', () => {
    const { types, changes, lease } = replay([
      [0, held('w1', 5)],
      [500, gone(8)],
    ]);
    expect(types).toEqual(['acquired', 'released', 'unseen_grants']);
    expect(changes[2]).toMatchObject({ previousToken: 5n, token: 8n, holder: null, detail: { count: 3, firstToken: '6', lastToken: '8' } });
    // The last grant is the last unseen one: its holder is not known, and nobody is paired with it.
    expect(lease).toMatchObject({ state: 'free', holder: null, lastToken: 8n, lastHolder: null, ended: null });
  });

  it('a free lock found held with a token three past the last: the unseen grants come before the acquisition, which is paired with nobody', () => {
    const { types, changes } = replay([
      [0, held('w1', 5)],
      [500, gone(5)],
      [1_000, held('w2', 9)],
    ]);
    expect(types).toEqual(['acquired', 'released', 'unseen_grants', 'acquired']);
    expect(changes[2]).toMatchObject({ previousToken: 5n, token: 8n, detail: { count: 3 } });
    expect(changes[3]).toMatchObject({ holder: 'w2', token: 9n, previousHolder: null, previousToken: 8n, gapMs: null, detail: { afterUnseenGrants: 3 } });
    expect(isChangeOfHands(changes[3]!)).toBe(false); // w1 did not hand over to w2: others held it between
  });

  it('the same holder with the next token is a new grant, not a renewal: released between the reads, then acquired', () => {
    const { types, changes, lease } = replay([
      [0, held('w1', 5)],
      [300, held('w1', 6)],
    ]);
    expect(types).toEqual(['acquired', 'released', 'acquired']);
    expect(changes[1]).toMatchObject({ previousHolder: 'w1', previousToken: 5n, gapMs: null, detail: { betweenReads: true } });
    expect(changes[2]).toMatchObject({ holder: 'w1', token: 6n, previousHolder: 'w1', previousToken: 5n, gapMs: null, detail: { cause: 'released', sameHolder: true } });
    expect(lease).toMatchObject({ state: 'held', holder: 'w1', token: 6n, transitions: 2 });
  });

  it('another holder with a token four past: released, three unseen grants, acquired (not taken over)', () => {
    const { types } = replay([
      [0, held('w1', 5)],
      [300, held('w2', 9)],
    ]);
    expect(types).toEqual(['acquired', 'released', 'unseen_grants', 'acquired']);
  });

  it('every token issued is accounted for exactly once, whatever the reads happened to see', () => {
    // Tokens 1..40 issued; the reads see a few of them held and the key gone at others.
    const steps: [number, Observation | undefined][] = [[0, held('a', 1)]];
    const seen = [3, 4, 9, 10, 17, 25, 26, 33];
    let mono = 0;
    for (let t = 2; t <= 40; t++) {
      mono += 100;
      if (seen.includes(t)) steps.push([mono, held(t % 2 ? 'a' : 'b', t)]);
      else if (t % 7 === 0) steps.push([mono, gone(t)]);
    }
    steps.push([mono + 100, gone(40)]);
    steps.push([mono + 200, gone(40)]);
    const { changes } = replay(steps);
    const expected = Array.from({ length: 39 }, (_, i) => BigInt(i + 2));
    expect(accountedTokens(changes)).toEqual(expected);
  });

  it('a read that looked before the one that saw the grant end (reads overlap) adds nothing: the counter orders them', () => {
    const { types, lease } = replay([
      [0, held('w1', 5)],
      [300, gone(5)],
      [400, held('w1', 5)],
    ]);
    expect(types).toEqual(['acquired', 'released']);
    expect(lease).toMatchObject({ state: 'free', lastToken: 5n });
  });

  it('a fence set by hand far past the last token is counted as text, and the transitions stay within a 32-bit column', () => {
    const big = (t: bigint): Observation => ({ ...gone(0), issued: t });
    const { changes, lease } = replay([
      [0, held('w1', 5)],
      [300, big(10n ** 19n)],
      [600, big(2n * 10n ** 19n)],
      [900, big(3n * 10n ** 19n)],
    ]);
    expect(changes[2]).toMatchObject({ type: 'unseen_grants', detail: { count: (10n ** 19n - 5n).toString() } });
    expect(lease!.transitions).toBe(2_147_483_647);
  });

  it('nothing is counted across an observation gap, at first sight, or without a counter of grants', () => {
    expect(replay([[0, held('w1', 5)], [500, gone(9), { afterGap: true }]]).types).toEqual(['acquired', 'observation_gap']);
    expect(replay([[0, gone(9)]]).lease).toBeUndefined(); // a counter alone never makes a lease
    expect(replay([[0, held('w1', 9)]]).types).toEqual(['acquired']);
    // A lease table may raise its token at every renewal: the same holder with a higher token is the same grant.
    expect(replay([[0, held('w1', 5, 20_000, false)], [300, held('w1', 9, 20_000, false)]]).types).toEqual(['acquired']);
  });

  it('applyRead: a free lock whose counter moved is not "unchanged", and a second read of the same counter adds nothing', () => {
    const known = new Map<string, TrackedLease>();
    applyRead(known, [held('w1', 5)], read(0));
    applyRead(known, [gone(5)], read(200), ['lock:order']);
    expect(applyRead(known, [gone(5)], read(300), ['lock:order']).events).toEqual([]);
    const moved = applyRead(known, [gone(7)], read(400), ['lock:order']);
    expect(moved.events.map((e) => e.change.type)).toEqual(['unseen_grants']);
    expect(applyRead(known, [gone(7)], read(500), ['lock:order']).events).toEqual([]);
    // A full read whose counter is gone too (no observation at all) changes nothing either.
    expect(applyRead(known, [], read(600)).events).toEqual([]);
  });
});
