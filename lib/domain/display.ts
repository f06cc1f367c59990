// Values read from backends are untrusted: binary, huge, non-UTF-8, control characters.
// They are shown as text that is safe to print anywhere (a terminal, a log, an HTML page
// that escapes as usual) and short enough to read.

export const DEFAULT_DISPLAY_CHARS = 200;

export type DisplayValue = {
  text: string;
  /** The value had more than the characters shown. */
  truncated: boolean;
  /** Its size in bytes. */
  bytes: number;
  /** It was not valid UTF-8 text, or held control characters: escapes were needed. */
  escaped: boolean;
};

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Printable UTF-8 stays as it is; every other byte becomes \xNN, and a backslash becomes
 * \\ so the result can be read back unambiguously. At most `maxChars` characters are kept.
 */
export function displayBytes(value: Uint8Array | string, maxChars = DEFAULT_DISPLAY_CHARS): DisplayValue {
  const bytes = typeof value === 'string' ? new TextEncoder().encode(value) : value;
  let text: string;
  let escaped = false;
  try {
    text = escapeControls(decoder.decode(bytes));
    escaped = text !== (typeof value === 'string' ? value : decoder.decode(bytes));
  } catch {
    escaped = true;
    text = escapeInvalid(bytes);
  }
  const characters = Array.from(text);
  const truncated = characters.length > maxChars;
  return { text: truncated ? `${characters.slice(0, maxChars - 1).join('')}…` : text, truncated, bytes: bytes.length, escaped };
}

// Most values are short printable ASCII: they are shown as they are, without the decoding
// work (the collector displays every key and holder of every read).
const PLAIN = /^[\x20-\x5b\x5d-\x7e]*$/;

/** The same, as one string: for holders and keys shown in tables. */
export function displayText(value: Uint8Array | string, maxChars = DEFAULT_DISPLAY_CHARS): string {
  if (value.length <= maxChars) {
    if (typeof value === 'string') {
      if (PLAIN.test(value)) return value;
    } else {
      let plain = true;
      for (let i = 0; i < value.length; i++) {
        const byte = value[i]!;
        if (byte < 0x20 || byte > 0x7e || byte === 0x5c) {
          plain = false;
          break;
        }
      }
      if (plain) return String.fromCharCode(...value);
    }
  }
  return displayBytes(value, maxChars).text;
}

function escapeControls(text: string): string {
  // C0 and C1 controls, DEL, and the line/paragraph separators; backslash first.
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return text.replace(/\\/g, '\\\\').replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

function escapeInvalid(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  while (i < bytes.length) {
    const length = utf8SequenceLength(bytes, i);
    if (length > 0) {
      out += escapeControls(decoder.decode(bytes.subarray(i, i + length)));
      i += length;
    } else {
      out += `\\x${bytes[i]!.toString(16).padStart(2, '0')}`;
      i += 1;
    }
  }
  return out;
}

/** Length of the valid UTF-8 sequence starting at i, or 0 when the byte there starts none. */
function utf8SequenceLength(bytes: Uint8Array, i: number): number {
  const first = bytes[i]!;
  const length = first < 0x80 ? 1 : first >= 0xc2 && first <= 0xdf ? 2 : first >= 0xe0 && first <= 0xef ? 3 : first >= 0xf0 && first <= 0xf4 ? 4 : 0;
  if (length === 0 || i + length > bytes.length) return 0;
  try {
    decoder.decode(bytes.subarray(i, i + length));
    return length;
  } catch {
    return 0;
  }
}
