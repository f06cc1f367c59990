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
