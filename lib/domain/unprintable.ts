// The one definition of the characters Leasehold never shows as they are. A key, a holder, an
// error excerpt or a request's value may carry them; in a table, a log line, a terminal or a
// notification they would break the line, hide text or reverse it (U+202E could make "evil"
// read as "live"). Display text escapes them (display.ts), a log line or an excerpt replaces
// them (printable in lib/alerts/deliver/send.ts), a request's parameter that holds a control
// character is refused (lib/api/query-schemas.ts).

/** C0 controls, DEL and C1 controls, as inclusive ranges of code points. */
const CONTROLS: readonly (readonly [number, number])[] = [
  [0x00, 0x1f],
  [0x7f, 0x9f],
];
/**
 * Invisible, direction-changing and line-separating characters: soft hyphen, Arabic letter mark,
 * Mongolian vowel separator, zero-width spaces and joiners and the LRM/RLM marks, line and
 * paragraph separators with the bidi embeddings and overrides, word joiner, invisible operators
 * and bidi isolates, the byte-order mark.
 */
const INVISIBLE: readonly (readonly [number, number])[] = [
  [0xad, 0xad],
  [0x61c, 0x61c],
  [0x180e, 0x180e],
  [0x200b, 0x200f],
  [0x2028, 0x202e],
  [0x2060, 0x2069],
  [0xfeff, 0xfeff],
];

const u = (code: number) => `\\u${code.toString(16).padStart(4, '0')}`;
const characterClass = (ranges: readonly (readonly [number, number])[]) => ranges.map(([from, to]) => (from === to ? u(from) : `${u(from)}-${u(to)}`)).join('');
const inRanges = (ranges: readonly (readonly [number, number])[], code: number) => ranges.some(([from, to]) => code >= from && code <= to);

// Each pattern is built once. The global ones (…S, RUNS) are for String.prototype.replace,
// which starts from 0 whatever lastIndex holds and leaves it at 0; test() or exec() with a
// shared global pattern would carry lastIndex from one call to the next: use the non-global
// ones (CONTROL_CHARACTER, UNPRINTABLE_CHARACTER) to test.
const CONTROL_CLASS = `[${characterClass(CONTROLS)}]`;
const UNPRINTABLE_CLASS = `[${characterClass(CONTROLS)}${characterClass(INVISIBLE)}]`;

/** Matches a control character (C0, DEL, C1). */
export const CONTROL_CHARACTER = new RegExp(CONTROL_CLASS);

/** Finds each control character (global: for replace()). */
export const CONTROL_CHARACTERS = new RegExp(CONTROL_CLASS, 'g');

/** Matches an unprintable character: a control or an invisible one. */
export const UNPRINTABLE_CHARACTER = new RegExp(UNPRINTABLE_CLASS);

/** Finds each unprintable character (global: for replace()). */
export const UNPRINTABLE_CHARACTERS = new RegExp(UNPRINTABLE_CLASS, 'g');

/** Finds each run of unprintable characters (global: for replace()). */
export const UNPRINTABLE_RUNS = new RegExp(`${UNPRINTABLE_CLASS}+`, 'g');

/** A code point that is a control character (C0, DEL, C1). */
export const isControl = (code: number) => inRanges(CONTROLS, code);

/** A code point that is unprintable: a control character or an invisible one. */
export const isUnprintable = (code: number) => inRanges(CONTROLS, code) || (code >= 0xad && inRanges(INVISIBLE, code));
