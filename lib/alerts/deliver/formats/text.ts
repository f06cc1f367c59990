// Text from the alert for the formats' fields. Keys and holders come from backends and are
// hostile: 10 kB long, binary, control and bidi characters, lone UTF-16 surrogates (which no
// UTF-8 receiver can decode). They arrive as exact text (lib/domain/display.ts), escaped once
// already, and the summary quotes them so: here they are not escaped again (that would show
// `ctl\\x00` for `ctl\x00`), only made printable where they are not yet (a rule's name, a
// person's text), well-formed, and cut to the receiver's limit between escapes. Each format
// then escapes for its receiver, once: JSON encoding, and Slack its own (slack.ts).
import { formatDuration } from '../../../domain/duration';
import { cutExactText, terminalText } from '../../../domain/display';

/** Printable and well-formed: control, bidi and invisible characters become \uNNNN, and so do lone surrogates. */
export function cleanText(value: string): string {
  return terminalText(value).replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
}

/** At most `max` UTF-16 code units (the strictest way receivers count), ending in "…" when cut, never inside an escape or a surrogate pair. */
export const truncate = (text: string, max: number): string => cutExactText(text, max);

/** cleanText, then truncate. */
export function fieldText(value: string | null | undefined, max: number): string {
  return value == null ? '' : truncate(cleanText(value), max);
}

/** A link a receiver can open: an absolute http(s) URL, or null (a relative console path is not one). */
export function absoluteLink(link: string | null, max = 3000): string | null {
  if (!link || link.length > max) return null;
  try {
    const url = new URL(link);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.toString() : null;
  } catch {
    return null;
  }
}

/** "850 ms", "12.5 s", "-1.2 s": margins and gaps for a person. */
export function formatMs(ms: number | null): string | null {
  if (ms == null || !Number.isFinite(ms)) return null;
  return formatDuration(ms, { msBelow: 10_000 });
}

/** JSON that a bigint in an alert's detail cannot break (as a decimal string, like tokens). */
export function toJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}
