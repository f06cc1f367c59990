// Values read from backends are untrusted: binary, huge, non-UTF-8, control characters,
// bidi overrides. Two forms of them are made here:
//
// - exact text (exactText), which is what identity and comparison use: a lease's key, a
//   holder. It is an injective escape of the value's bytes (unescapeText gives them back),
//   so two different keys never become one lease and two different holders never look like
//   one; a value longer than EXACT_TEXT_MAX_BYTES is its first bytes plus a digest of the
//   whole, which the caller computes (and the backend may compute: Redis hashes its own
//   values, so a 2 MB value is never sent whole).
// - display text (displayText), cut to a length a person reads, for messages. It escapes a raw
//   value; a text that is exact text already is only cut (cutExactText), not escaped again.
//
// Escapes: "\\" for a backslash, "\xNN" for a control character (NN < 80) or a byte that is
// not valid UTF-8 (NN >= 80), "\uNNNN" for C1 controls, line separators, invisible and bidi
// formatting characters (U+202E could make "evil" read as "live" in a table or a terminal),
// and for "…", which only the long form's marker uses unescaped. Everything else is shown.

import { isUnprintable, UNPRINTABLE_CHARACTERS } from './unprintable';

export const DEFAULT_DISPLAY_CHARS = 200;
/** Values up to this many bytes are kept whole in their exact text. */
export const EXACT_TEXT_MAX_BYTES = 1024;
/** How many bytes of a longer value its exact text shows before the digest. */
export const EXACT_TEXT_HEAD_BYTES = 120;

export type DisplayValue = {
  text: string;
  /** The value had more than the characters shown. */
  truncated: boolean;
  /** Its size in bytes. */
  bytes: number;
  /** It was not valid UTF-8 text, or held characters that needed escapes. */
  escaped: boolean;
};

/** Characters shown as \uNNNN: C1 controls, invisible, direction-changing or line-breaking ones (unprintable.ts), a lone surrogate (only in JS strings), and the marker "…". */
const needsUnicodeEscape = (code: number) => isUnprintable(code) || code === 0x2026 || (code >= 0xd800 && code <= 0xdfff);

const hex2 = (n: number) => n.toString(16).padStart(2, '0');
const hex4 = (n: number) => n.toString(16).padStart(4, '0');

function escapeCodePoint(code: number): string {
  if (code === 0x5c) return '\\\\';
  if (code < 0x20 || code === 0x7f) return `\\x${hex2(code)}`;
  if (needsUnicodeEscape(code)) return `\\u${hex4(code)}`;
  return String.fromCodePoint(code);
}

// Most values are short printable ASCII: shown as they are, without the decoding work.
const PLAIN = /^[\x20-\x5b\x5d-\x7e]*$/;

/**
 * The length of the valid UTF-8 sequence starting at i and its code point, or null when the
 * byte there starts none (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
 */
function utf8At(bytes: Uint8Array, i: number): { length: number; code: number } | null {
  const b0 = bytes[i]!;
  if (b0 < 0x80) return { length: 1, code: b0 };
  let length: number;
  let min: number;
  let code: number;
  if (b0 >= 0xc2 && b0 <= 0xdf) [length, min, code] = [2, 0x80, b0 & 0x1f];
  else if (b0 >= 0xe0 && b0 <= 0xef) [length, min, code] = [3, 0x800, b0 & 0x0f];
  else if (b0 >= 0xf0 && b0 <= 0xf4) [length, min, code] = [4, 0x10000, b0 & 0x07];
  else return null;
  if (i + length > bytes.length) return null;
  for (let k = 1; k < length; k++) {
    const b = bytes[i + k]!;
    if ((b & 0xc0) !== 0x80) return null;
    code = (code << 6) | (b & 0x3f);
  }
  if (code < min || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return null;
  return { length, code };
}

// ASCII runs are decoded in one call (windows-1252, which TextDecoder calls latin1, is ASCII below 0x80).
const ascii = new TextDecoder('latin1');

/** The escaped text of some bytes, whole. One pass, linear in their length. */
export function escapeBytes(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    if (b >= 0x20 && b < 0x7f && b !== 0x5c) {
      // A run of plain ASCII at once.
      let j = i + 1;
      while (j < bytes.length && bytes[j]! >= 0x20 && bytes[j]! < 0x7f && bytes[j] !== 0x5c) j++;
      out += ascii.decode(bytes.subarray(i, j));
      i = j;
      continue;
    }
    const sequence = utf8At(bytes, i);
    if (sequence) {
      out += escapeCodePoint(sequence.code);
      i += sequence.length;
    } else {
      out += `\\x${hex2(b)}`;
      i += 1;
    }
  }
  return out;
}

/** The escaped text of a string (a Postgres text value), whole. */
export function escapeText(value: string): string {
  if (PLAIN.test(value)) return value;
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    let code = unit;
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < value.length) {
      const low = value.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        code = 0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00);
        i++;
      }
    }
    out += escapeCodePoint(code);
  }
  return out;
}

/**
 * Text already shown elsewhere (the API's escaped keys and holders, error messages), made safe
 * for a terminal: control, bidi and invisible characters become \uNNNN; everything else,
 * backslashes included, stays as it is (an escaped text stays readable, not escaped twice).
 */
export function terminalText(text: string): string {
  return text.replace(UNPRINTABLE_CHARACTERS, (c) => `\\u${hex4(c.charCodeAt(0))}`);
}

/** How many UTF-16 code units the escape or character at i takes: a "\" starts an escape only when a whole one follows. */
function escapedUnitLength(text: string, i: number): number {
  const unit = text.charCodeAt(i);
  if (unit === 0x5c) {
    const kind = text[i + 1];
    if (kind === '\\') return 2;
    if (kind === 'x' && /^[0-9a-fA-F]{2}$/.test(text.slice(i + 2, i + 4))) return 4;
    if (kind === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) return 6;
    return 1;
  }
  if (unit >= 0xd800 && unit <= 0xdbff) {
    const low = text.charCodeAt(i + 1);
    if (low >= 0xdc00 && low <= 0xdfff) return 2;
  }
  return 1;
}

/**
 * Exact text (or terminalText's) shown in a message, cut to at most `max` UTF-16 code units
 * (the strictest way receivers count, so a limit in characters holds too), ending in "…" when
 * cut. Nothing is escaped again: its backslashes already stand for escapes, and doubling them
 * would show `ctl\\x00` for the holder the API calls `ctl\x00`. The cut falls between escapes
 * and surrogate pairs, never inside one, so what is left still reads, and unescapes, as it did.
 * Only the first `max` units are looked at: a 10 kB key costs what a short one does.
 */
export function cutExactText(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max < 1) return '';
  const room = max - 1;
  let end = 0;
  while (end < text.length) {
    const next = end + escapedUnitLength(text, end);
    if (next > room) break;
    end = next;
  }
  return `${text.slice(0, end)}…`;
}

/**
 * A key, holder or lease id (exact text) quoted in a sentence: only cut (cutExactText).
 * terminalText changes nothing in an exact text; it is there so that a value that somehow is
 * not one still brings no control or bidi character into a message, a log or a terminal.
 */
export const quotedExactText = (exact: string, max: number) => cutExactText(terminalText(exact), max);

/** The bytes an escaped text stands for: the inverse of escapeBytes (and of escapeText, as UTF-8). Null when it is not such a text. */
export function unescapeText(text: string): Uint8Array | null {
  const out: number[] = [];
  const encoder = new TextEncoder();
  for (let i = 0; i < text.length; ) {
    const c = text[i]!;
    if (c !== '\\') {
      const code = text.codePointAt(i)!;
      const char = String.fromCodePoint(code);
      if (needsUnicodeEscape(code) || code < 0x20 || code === 0x7f) return null;
      out.push(...encoder.encode(char));
      i += char.length;
      continue;
    }
    const kind = text[i + 1];
    if (kind === '\\') {
      out.push(0x5c);
      i += 2;
    } else if (kind === 'x' && /^[0-9a-f]{2}$/.test(text.slice(i + 2, i + 4))) {
      out.push(parseInt(text.slice(i + 2, i + 4), 16));
      i += 4;
    } else if (kind === 'u' && /^[0-9a-f]{4}$/.test(text.slice(i + 2, i + 6))) {
      const code = parseInt(text.slice(i + 2, i + 6), 16);
      if (code >= 0xd800 && code <= 0xdfff) return null;
      out.push(...encoder.encode(String.fromCharCode(code)));
      i += 6;
    } else {
      return null;
    }
  }
  return Uint8Array.from(out);
}

/** A valid-UTF-8 prefix boundary at or before `end`: a multi-byte character is not cut in two. */
function characterBoundary(bytes: Uint8Array, end: number): number {
  let cut = Math.min(end, bytes.length);
  for (let back = 0; back < 3 && cut > 0 && cut < bytes.length && (bytes[cut]! & 0xc0) === 0x80; back++) cut--;
  return (bytes[cut]! & 0xc0) === 0x80 ? Math.min(end, bytes.length) : cut;
}

/**
 * The exact text of a value, for identity and comparison. `head`: its bytes, or at least its
 * first EXACT_TEXT_HEAD_BYTES when it is longer than EXACT_TEXT_MAX_BYTES; `totalBytes`: its
 * length; `digest`: a digest of the whole value ("sha1:…", "sha256:…"), needed only when it is
 * longer. Different values give different texts (up to the digest's collisions).
 */
export function exactText(head: Uint8Array, totalBytes: number, digest: string | null): string {
  if (totalBytes <= EXACT_TEXT_MAX_BYTES && head.length >= totalBytes) return escapeBytes(head.subarray(0, totalBytes));
  if (digest === null) throw new Error(`exactText: a value of ${totalBytes} bytes needs a digest`);
  const shown = head.subarray(0, characterBoundary(head, EXACT_TEXT_HEAD_BYTES));
  return `${escapeBytes(shown)}…[${totalBytes} bytes, ${digest}]`;
}

/** The same for a string (UTF-8), with a digest function for long ones. */
export function exactTextOf(value: Uint8Array | string, digestOf: (bytes: Uint8Array) => string): string {
  if (typeof value === 'string') {
    // Short strings (nearly all keys and holders) need no encoding when they are plain.
    if (value.length <= EXACT_TEXT_MAX_BYTES / 4 || (value.length <= EXACT_TEXT_MAX_BYTES && PLAIN.test(value))) return escapeText(value);
    value = new TextEncoder().encode(value);
  }
  return exactText(value, value.length, value.length > EXACT_TEXT_MAX_BYTES ? digestOf(value) : null);
}

/**
 * Printable UTF-8 stays as it is; everything else is escaped as above. At most `maxChars`
 * characters are kept, and only the bytes they can come from are decoded, so a 2 MB value
 * costs what a short one does.
 */
export function displayBytes(value: Uint8Array | string, maxChars = DEFAULT_DISPLAY_CHARS): DisplayValue {
  let text: string;
  let whole: boolean;
  let bytes: number;
  if (typeof value === 'string') {
    const head = value.slice(0, maxChars * 2);
    text = escapeText(head);
    whole = head.length === value.length;
    bytes = new TextEncoder().encode(value).length;
  } else {
    const cut = characterBoundary(value, maxChars * 4);
    text = escapeBytes(value.subarray(0, cut));
    whole = cut >= value.length;
    bytes = value.length;
  }
  const characters = Array.from(text);
  const truncated = characters.length > maxChars || !whole;
  return {
    text: truncated ? `${characters.slice(0, maxChars - 1).join('')}…` : text,
    truncated,
    bytes,
    // A backslash in the text only ever comes from an escape (a literal one is doubled).
    escaped: text.includes('\\'),
  };
}

function isPlainBytes(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    if (byte < 0x20 || byte > 0x7e || byte === 0x5c) return false;
  }
  return true;
}

/** The same, as one string: for holders and keys shown in messages. */
export function displayText(value: Uint8Array | string, maxChars = DEFAULT_DISPLAY_CHARS): string {
  if (value.length <= maxChars) {
    if (typeof value === 'string') {
      if (PLAIN.test(value)) return value;
    } else if (isPlainBytes(value)) {
      return ascii.decode(value);
    }
  }
  return displayBytes(value, maxChars).text;
}
