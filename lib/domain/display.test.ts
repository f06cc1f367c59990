import { describe, expect, it } from 'vitest';
import { displayBytes, displayText } from './display';

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
