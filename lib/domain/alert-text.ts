// How alert summaries quote what they name (lib/domain/alert-rules.ts). Pure.
import { formatDuration } from './duration';
import { cutExactText, quotedExactText, terminalText } from './display';

/** A lease id, key or holder in a summary: exact text (display.ts), escaped once already, as the API shows it. */
export const show = (exact: string | null) => (exact === null ? 'nobody' : quotedExactText(exact, 80));

/**
 * What people wrote (a force action's reason; an actor's name, which an identity provider may
 * supply) and error messages (why a source is down, quoting values already displayed). They
 * are not exact text, and not raw values to escape either: their backslashes are their own
 * ("CORP\alice", a path), so they are shown, not doubled. Control, bidi and invisible
 * characters still become \uNNNN, and line breaks a space: a summary is one line.
 */
export const said = (text: string, max: number) => cutExactText(terminalText(text.replace(/[\r\n]+/g, ' ')), max);

/** A duration as a summary says it: "850 ms", "12.5 s". */
export const ms = (value: number | null) => (value === null ? '?' : formatDuration(value, { msBelow: 10_000 }));
