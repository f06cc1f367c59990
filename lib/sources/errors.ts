// Typed errors of the adapters, mapped to words at the edge. Messages name what was wrong
// and never carry credentials.

/** The source could not be read: unreachable, timed out, refused, or laid out unlike its config says. */
export class SourceUnavailableError extends Error {
  constructor(readonly source: string, reason: string, options?: { cause?: unknown }) {
    super(`${source}: ${reason}`, options);
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
  const message = String((error as Error | null)?.message ?? error);
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
      return /timed? ?out/i.test(message) ? `${target} did not answer in time` : `${target}: ${message}`;
  }
}
