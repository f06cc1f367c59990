import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { cutExactText, displayBytes, displayText, escapeBytes, exactText, exactTextOf, EXACT_TEXT_MAX_BYTES, terminalText, unescapeText } from './display';

describe('displaying untrusted values', () => {
  it.each([
    { name: 'plain text stays', input: 'worker-7:3f9c1a2b', text: 'worker-7:3f9c1a2b', escaped: false },
    { name: 'unicode stays', input: 'wörker-∆', text: 'wörker-∆', escaped: false },
    { name: 'control characters are escaped', input: 'a\nb\u0007\u001b[31m', text: 'a\\x0ab\\x07\\x1b[31m', escaped: true },
    { name: 'a backslash is doubled, so escapes stay unambiguous', input: 'a\\x41', text: 'a\\\\x41', escaped: true },
    { name: 'invalid UTF-8 bytes become \\xNN', input: Uint8Array.from([0x61, 0xff, 0xfe, 0x62]), text: 'a\\xff\\xfeb', escaped: true },
    { name: 'a NUL byte', input: Uint8Array.from([0x00, 0x41]), text: '\\x00A', escaped: true },
    { name: 'a truncated multi-byte sequence', input: Uint8Array.from([0x61, 0xe2, 0x82]), text: 'a\\xe2\\x82', escaped: true },
    { name: 'line separators', input: 'a\u2028b', text: 'a\\u2028b', escaped: true },
  ])('$name', ({ input, text, escaped }) => {
    expect(displayBytes(input)).toMatchObject({ text, escaped });
  });

  it('huge values are cut to the limit, and say so', () => {
    const shown = displayBytes('x'.repeat(1_000_000), 50);
    expect(Array.from(shown.text)).toHaveLength(50);
    expect(shown).toMatchObject({ truncated: true, bytes: 1_000_000 });
    expect(shown.text.endsWith('…')).toBe(true);
    expect(displayText('short', 50)).toBe('short');
  });
});

describe('exact text: the identity of keys and holders', () => {
  const digest = (bytes: Uint8Array) => `len:${bytes.length}:${bytes[bytes.length - 1]}`;

  it.each([
    { name: 'a bidi override is escaped, so "evil" cannot read as "live"', input: 'lock:\u202Eevil', text: 'lock:\\u202eevil' },
    { name: 'bidi isolates and zero-width characters', input: 'a\u2066b\u200bc\ufeff', text: 'a\\u2066b\\u200bc\\ufeff' },
    { name: 'a C1 control is not confused with an invalid byte', input: 'a\u0081', text: 'a\\u0081' },
    { name: 'the long form\'s marker is escaped in short values', input: 'a…b', text: 'a\\u2026b' },
  ])('$name', ({ input, text }) => {
    expect(exactTextOf(input, digest)).toBe(text);
    expect(exactTextOf(new TextEncoder().encode(input), digest)).toBe(text);
  });

  it('an invalid byte 0x81 and the character U+0081 differ', () => {
    expect(exactTextOf(Uint8Array.from([0x61, 0x81]), digest)).toBe('a\\x81');
    expect(exactTextOf(Uint8Array.from([0x61, 0xc2, 0x81]), digest)).toBe('a\\u0081');
  });

  it('two long values sharing their first kilobyte stay two values', () => {
    const a = new Uint8Array(EXACT_TEXT_MAX_BYTES + 10).fill(0x61);
    const b = Uint8Array.from(a);
    b[b.length - 1] = 0x62;
    expect(exactTextOf(a, digest)).not.toBe(exactTextOf(b, digest));
    expect(exactTextOf(a, digest).length).toBeLessThan(200);
    expect(exactTextOf(a, digest)).toMatch(/^a+…\[1034 bytes, len:1034:97\]$/);
  });

  it('a long value is cut at a character boundary, not inside one', () => {
    const text = 'é'.repeat(EXACT_TEXT_MAX_BYTES);
    expect(exactTextOf(text, digest)).toMatch(/^é+…\[2048 bytes/);
  });

  it('the exact text of a value needs its digest when it is long', () => {
    expect(() => exactText(new Uint8Array(10), 5_000, null)).toThrow(/needs a digest/);
  });

  it('property: escaping bytes is injective (unescaping gives the bytes back)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const text = escapeBytes(bytes);
        expect(unescapeText(text)).toEqual(bytes);
      }),
      { numRuns: 2_000 },
    );
  });

  it('property: a string and its UTF-8 bytes have the same exact text, and it holds no control or bidi character', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 40 }), (a, b) => {
        for (const value of [a, b]) {
          const text = exactTextOf(value, digest);
          if (!/[\ud800-\udfff]/.test(value)) expect(text).toBe(exactTextOf(new TextEncoder().encode(value), digest));
          // eslint-disable-next-line no-control-regex -- the point
          expect(text).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/);
        }
      }),
      { numRuns: 2_000 },
    );
  });

  it('property: display text is bounded, whatever the value', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 5_000 }), fc.integer({ min: 2, max: 300 }), (bytes, max) => {
        const shown = displayBytes(bytes, max);
        expect(Array.from(shown.text).length).toBeLessThanOrEqual(max);
        expect(shown.bytes).toBe(bytes.length);
      }),
      { numRuns: 300 },
    );
  });
});

describe('cutting exact text for a message', () => {
  it.each([
    { name: 'text within the limit stays whole, its escapes as they are', text: 'ctl\\x00', max: 80, cut: 'ctl\\x00' },
    { name: 'nothing is escaped again', text: 'C:\\\\jobs\\x00\\u202e', max: 80, cut: 'C:\\\\jobs\\x00\\u202e' },
    { name: 'a \\xNN escape is kept whole or left out', text: 'ab\\x00cd', max: 5, cut: 'ab…' },
    { name: 'a \\uNNNN escape is kept whole or left out', text: 'lock:\\u202eevil', max: 10, cut: 'lock:…' },
    { name: 'an escaped backslash is one unit', text: 'a\\\\b', max: 3, cut: 'a…' },
    { name: 'an escaped backslash before "x41" is not read as \\x41', text: 'a\\\\x41', max: 5, cut: 'a\\\\x…' },
    { name: 'a surrogate pair stays whole', text: '🔒🔒🔒', max: 4, cut: '🔒…' },
    { name: 'a backslash that starts no escape is one character', text: 'a\\qbcdef', max: 4, cut: 'a\\q…' },
    { name: 'the cut counts the marker', text: 'abcdef', max: 4, cut: 'abc…' },
  ])('$name', ({ text, max, cut }) => {
    expect(cutExactText(text, max)).toBe(cut);
  });

  it('property: a cut exact text fits the limit and is still exact text (no half escape)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.integer({ min: 1, max: 400 }), (bytes, max) => {
        const exact = escapeBytes(bytes);
        const cut = cutExactText(exact, max);
        expect(cut.length).toBeLessThanOrEqual(max);
        if (cut === exact) return;
        expect(cut.endsWith('…')).toBe(true);
        const kept = cut.slice(0, -1);
        expect(exact.startsWith(kept)).toBe(true);
        expect(unescapeText(kept)).not.toBeNull();
      }),
      { numRuns: 2_000 },
    );
  });

  it('a 10 kB text costs what a short one does', () => {
    expect(cutExactText('\\x00'.repeat(2_560), 80)).toBe(`${'\\x00'.repeat(19)}…`);
  });
});

describe('terminal text', () => {
  it.each([
    { name: 'a bidi override', input: 'lock:\u202eevil', text: 'lock:\\u202eevil' },
    { name: 'an escape sequence', input: 'w\u001b[2J', text: 'w\\u001b[2J' },
    { name: 'already escaped text stays as it is', input: 'a\\x00b', text: 'a\\x00b' },
    { name: 'plain text', input: 'worker-7', text: 'worker-7' },
  ])('$name', ({ input, text }) => {
    expect(terminalText(input)).toBe(text);
  });
});
