import { describe, expect, it } from 'vitest';
import { isChangeOfHands } from './health';

describe('isChangeOfHands: what "changes in the last hour" and flapping count', () => {
  it.each([
    [{ type: 'acquired', detail: null }, true],
    [{ type: 'acquired', detail: { firstSeen: true } }, false], // Leasehold starting to look is not the lease moving
    [{ type: 'acquired', detail: { firstSeen: 'yes' } }, true],
    [{ type: 'taken_over', detail: { firstSeen: true } }, false],
    [{ type: 'expired' }, true],
    [{ type: 'released', detail: 'text' }, true],
    [{ type: 'force_expired', detail: {} }, true],
    [{ type: 'renewed', detail: null }, false],
    [{ type: 'source_down', detail: null }, false],
  ])('%j → %s', (event, expected) => {
    expect(isChangeOfHands(event)).toBe(expected);
  });
});
