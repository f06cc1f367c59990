// Failures of a source read part by part: a table (or pg_locks) that cannot be read for
// reasons of its own, which leaves the source's other parts readable, and a failure of the
// connection or server, which fails the whole read.
import { redactUrlPassword } from '../../redact';
import { SourceUnavailableError } from '../errors';

/** One table (or pg_locks) cannot be read, for reasons of its own: the source's other parts still can. */
export class PartUnreadableError extends SourceUnavailableError {}

/**
 * Whether a failed query speaks only for its own table or view (it is missing, has other
 * columns, holds values the query cannot take, was cancelled by the statement timeout while
 * locked), rather than for the connection or the server: then the source's other parts are
 * still read.
 */
export function onlyThisPart(error: unknown): boolean {
  if (error instanceof PartUnreadableError) return true;
  if (error instanceof SourceUnavailableError) return false;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^(42|22|2F|39|55|57014|42501)/.test(code) && code.length === 5;
}

/** The whole source cannot be read: `what` it was doing, the error's code and message (URL passwords redacted). */
export function unavailable(source: string, error: unknown, what: string): SourceUnavailableError {
  const code = (error as { code?: string }).code;
  const message = redactUrlPassword((error as Error).message ?? String(error));
  return new SourceUnavailableError(source, `${what}: ${code && !message.includes(code) ? `${code} ` : ''}${message}`, { cause: error });
}
