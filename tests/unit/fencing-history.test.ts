import { describe, expect, it } from 'vitest';
import { checkFencedHistory, type AcceptedWrite, type AttemptedWrite } from '../../lib/domain/fencing-history';

const w = (writer: string, value: string, token: number, outcome: AttemptedWrite['outcome']): AttemptedWrite => ({
  writer,
  value,
  token: BigInt(token),
  outcome,
});
const a = (value: string, token: number): AcceptedWrite => ({ value, token: BigInt(token) });

describe('checkFencedHistory', () => {
  it.each([
    {
      name: 'a clean history with a rejected stale write',
      attempts: [w('A', 'a1', 33, 'accepted'), w('B', 'b1', 34, 'accepted'), w('A', 'a2', 33, 'rejected')],
      final: [a('a1', 33), a('b1', 34)],
      expected: [],
    },
    {
      name: 'equal tokens from one holder are fine',
      attempts: [w('A', 'a1', 5, 'accepted'), w('A', 'a2', 5, 'accepted')],
      final: [a('a1', 5), a('a2', 5)],
      expected: [],
    },
    {
      name: 'unknown outcomes may or may not be present',
      attempts: [w('A', 'a1', 5, 'unknown'), w('B', 'b1', 6, 'unknown')],
      final: [a('b1', 6)],
      expected: [],
    },
    {
      name: "the seed's unfenced storage: A's stale update lands after B's",
      attempts: [w('A', 'a1', 33, 'accepted'), w('B', 'b1', 34, 'accepted'), w('A', 'a2', 33, 'accepted')],
      final: [a('a1', 33), a('b1', 34), a('a2', 33)],
      expected: ['stale_write_accepted'],
    },
    {
      name: 'an acknowledged write that vanished',
      attempts: [w('A', 'a1', 1, 'accepted'), w('A', 'a2', 1, 'accepted')],
      final: [a('a1', 1)],
      expected: ['acknowledged_write_lost'],
    },
    {
      name: 'a write reported rejected that is there anyway',
      attempts: [w('A', 'a1', 1, 'rejected')],
      final: [a('a1', 1)],
      expected: ['rejected_write_present'],
    },
  ])('$name', ({ attempts, final, expected }) => {
    expect(checkFencedHistory(attempts, final).map((v) => v.kind)).toEqual(expected);
  });

  it('says which write, with which tokens', () => {
    const [violation] = checkFencedHistory([], [a('b1', 34), a('a2', 33)]);
    expect(violation?.message).toBe('write a2 with token 33 was accepted after a write with token 34');
  });
});
