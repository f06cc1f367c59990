import { describe, expect, it } from 'vitest';
import { CONTROL_CHARACTER, CONTROL_CHARACTERS, isControl, isUnprintable, UNPRINTABLE_CHARACTER, UNPRINTABLE_CHARACTERS, UNPRINTABLE_RUNS } from './unprintable';

describe('the one definition of unprintable characters', () => {
  it('the predicates and the patterns agree on every code point of the basic plane', () => {
    const disagree: number[] = [];
    for (let code = 0; code <= 0xffff; code++) {
      const c = String.fromCharCode(code);
      if (isUnprintable(code) !== UNPRINTABLE_CHARACTER.test(c) || isControl(code) !== CONTROL_CHARACTER.test(c)) disagree.push(code);
    }
    expect(disagree).toEqual([]);
  });

  it('holds controls, bidi overrides and invisible characters, and not printable text', () => {
    for (const code of [0x00, 0x0a, 0x1b, 0x7f, 0x85, 0x9f, 0xad, 0x200b, 0x200e, 0x2028, 0x202e, 0x2066, 0xfeff]) expect(isUnprintable(code), code.toString(16)).toBe(true);
    for (const code of [0x20, 0x41, 0x7e, 0xa0, 0xe9, 0x2026, 0x4e2d]) expect(isUnprintable(code), code.toString(16)).toBe(false);
    expect(isControl(0x202e)).toBe(false);
    expect('a\u202e\u200b\x00b\nc'.replace(UNPRINTABLE_RUNS, ' ')).toBe('a b c');
  });

  it('the global patterns, shared, find every match on every call (replace() starts them from 0)', () => {
    for (let i = 0; i < 3; i++) {
      expect('a\u202ebc\x00'.replace(UNPRINTABLE_CHARACTERS, '.')).toBe('a.bc.');
      expect('\x1b[2J\x85'.replace(CONTROL_CHARACTERS, '.')).toBe('.[2J.');
      expect('a\u202e\u200bb'.replace(UNPRINTABLE_RUNS, ' ')).toBe('a b');
    }
    expect([UNPRINTABLE_CHARACTERS.lastIndex, CONTROL_CHARACTERS.lastIndex, UNPRINTABLE_RUNS.lastIndex]).toEqual([0, 0, 0]);
  });
});
