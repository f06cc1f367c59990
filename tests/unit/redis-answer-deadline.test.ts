// How long one instance of a Redlock quorum may take before it counts as not answering
// (lib/sources/redis/instances.ts answerDeadlineMs): tied to the poll, and to what the instances
// typically take for that kind of call.
import { describe, expect, it } from 'vitest';
import { answerDeadlineMs } from '../../lib/sources/redis/instances';

describe('answerDeadlineMs', () => {
  it('is the poll interval for quick instances, never under 250 ms', () => {
    expect(answerDeadlineMs(500, 'full', [3, 4, 5])).toBe(500);
    expect(answerDeadlineMs(100, 'ping', [1, 1, 1])).toBe(250);
  });

  it("follows the instances' typical time (their median: one slow or frozen instance does not raise it)", () => {
    expect(answerDeadlineMs(500, 'full', [400, 420, 9_000])).toBe(1_260);
    expect(answerDeadlineMs(500, 'full', [0, 0, 0])).toBe(500);
  });

  it('gives a ping at most the command deadline; a full read of a large keyspace more', () => {
    expect(answerDeadlineMs(1_000, 'ping', [2_000, 2_000, 2_000])).toBe(3_000);
    expect(answerDeadlineMs(1_000, 'full', [2_000, 2_000, 2_000])).toBe(6_000);
  });
});
