// Typed errors of the adapters, mapped to words at the edge. Messages name what was wrong
// and never carry credentials: every reason has its URLs redacted here, and the registry
// (registry.ts) scrubs each source's errors of that source's secrets (scrubSourceError).
import { redactUrlsIn, scrub } from '../redact';

/** The source could not be read: unreachable, timed out, refused, or laid out unlike its config says. */
export class SourceUnavailableError extends Error {
  constructor(readonly source: string, reason: string, options?: { cause?: unknown }) {
    super(`${source}: ${redactUrlsIn(reason)}`, options);
    this.name = 'SourceUnavailableError';
  }
  /** The reason without the source name, for a person reading the sources page. */
  get reason(): string {
    return this.message.slice(this.source.length + 2);
  }
}

/**
 * A network error in words a person on call reads at once, naming the target (without
 * credentials): "redis://10.0.0.5:6379 refused the connection (is the server running?)".
 */
export function connectionProblem(error: unknown, target: string): string {
  const code = (error as { code?: string } | null)?.code;
  const message = redactUrlsIn(String((error as Error | null)?.message ?? error));
  switch (code) {
    case 'ECONNREFUSED':
      return `${target} refused the connection (is the server running, on that port?)`;
    case 'ETIMEDOUT':
      return `${target} did not answer in time`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `${target}: the host name does not resolve`;
    case 'ECONNRESET':
    case 'EPIPE':
      return `${target} closed the connection`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `${target} cannot be reached (no route to host)`;
    default:
      if (/timed? ?out/i.test(message)) return `${target} did not answer in time`;
      // ioredis meeting an HTTP server: "Unknown RESP type 72 "H". Please report this."
      if (/Unknown RESP type|Protocol error/i.test(message)) return `${target} answers, but not in its protocol (is that the right port?)`;
      // A JavaScript error is ours or the driver's, meeting an answer nobody expected: its
      // message ("toString() radix argument must be between 2 and 36") says nothing to a person.
      if (error instanceof TypeError || error instanceof RangeError || error instanceof SyntaxError || error instanceof ReferenceError) return `${target} gave an answer that could not be read (is that the right server and port?)`;
      return `${target}: ${message}`;
  }
}

/**
 * The error as it may leave a source: the message (a SourceUnavailableError's reason) and the
 * stack scrubbed of `secrets` and of URL passwords, and no `cause`, which a log would print
 * whole with whatever the driver put in it (its options, the connection string).
 */
export function scrubSourceError(error: unknown, secrets: readonly string[]): Error {
  if (error instanceof SourceUnavailableError) return new SourceUnavailableError(error.source, scrub(error.reason, secrets));
  const clean = new Error(scrub(redactUrlsIn(String((error as Error | null)?.message ?? error)), secrets));
  if (error instanceof Error) {
    clean.name = error.name;
    if (error.stack) clean.stack = scrub(redactUrlsIn(error.stack), secrets);
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' || typeof code === 'number') Object.assign(clean, { code });
  }
  return clean;
}
