import { describe, expect, it } from 'vitest';
import { isChangeOfHands, isRestart } from './health';

describe('isChangeOfHands: what "changes in the last hour", flapping and failovers count', () => {
  it.each([
    // A missed renewal and another node acquiring: two events, one change of hands.
    [{ type: 'expired', holder: null, previousHolder: 'a:00000001' }, false],
    [{ type: 'acquired', holder: 'b:00000002', previousHolder: 'a:00000001', detail: { cause: 'expired' } }, true],
    [{ type: 'released', holder: null, previousHolder: 'a', detail: 'text' }, false],
    [{ type: 'acquired', holder: 'b', previousHolder: 'a', detail: { cause: 'released' } }, true],
    [{ type: 'taken_over', holder: 'b', previousHolder: 'a' }, true],
    [{ type: 'force_expired', holder: null, previousHolder: 'a', detail: {} }, false],
    // The same holder again, nobody to pair with, Leasehold starting to look: no change of hands.
    [{ type: 'acquired', holder: 'a', previousHolder: 'a', detail: { cause: 'expired', sameHolder: true } }, false],
    [{ type: 'acquired', holder: 'a', previousHolder: null, detail: { afterGap: true } }, false],
    [{ type: 'acquired', holder: 'a', previousHolder: null, detail: { firstSeen: true } }, false],
    [{ type: 'taken_over', holder: 'b', previousHolder: 'a', detail: { firstSeen: true } }, false],
    [{ type: 'renewed', holder: 'a', previousHolder: 'a', detail: null }, false],
    [{ type: 'source_down', detail: null }, false],
  ])('%j → %s', (event, expected) => {
    expect(isChangeOfHands(event)).toBe(expected);
  });

  it('an expiry and a re-acquire by another node count as one, as the failovers page lists them', () => {
    const events = [
      { type: 'expired', holder: null, previousHolder: 'server-01:1d9f2069' },
      { type: 'acquired', holder: 'server-18:be98b3fc', previousHolder: 'server-01:1d9f2069', detail: { cause: 'expired' } },
    ];
    expect(events.filter(isChangeOfHands)).toHaveLength(1);
  });
});

describe('isRestart: the same node under a new instance, told apart from another node taking over', () => {
  it.each([
    [{ type: 'acquired', holder: 'server-12:70f95754', previousHolder: 'server-12:109b8a2c', detail: { cause: 'expired' } }, true],
    [{ type: 'taken_over', holder: 'db-1:aaaaaaaa', previousHolder: 'db-1:bbbbbbbb' }, true],
    [{ type: 'acquired', holder: 'server-13:70f95754', previousHolder: 'server-12:109b8a2c', detail: { cause: 'expired' } }, false],
    // Not lib/lease's form: never guessed to be a restart.
    [{ type: 'acquired', holder: 'host-a:2', previousHolder: 'host-a:1', detail: { cause: 'expired' } }, false],
    [{ type: 'acquired', holder: 'host-a', previousHolder: 'host-b', detail: { cause: 'expired' } }, false],
    // Not a change of hands at all.
    [{ type: 'expired', holder: null, previousHolder: 'server-12:109b8a2c' }, false],
  ])('%j → %s', (event, expected) => {
    expect(isRestart(event)).toBe(expected);
  });
});
