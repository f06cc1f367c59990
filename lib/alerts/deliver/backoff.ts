// When to try a failed delivery again: exponential backoff with full jitter (a delay drawn
// uniformly between 0 and a ceiling that doubles each attempt), so that many deliveries that
// failed together (a receiver restarting) do not all come back together. A receiver's
// Retry-After is a floor: it knows when it will be ready.

/** Attempts per delivery before it is given up (the first one included). */
export const DEFAULT_MAX_ATTEMPTS = 8;

export type RetryDelayOptions = {
  /** The ceiling of the first retry's delay. */
  baseMs?: number;
  /** The ceiling never grows past this. */
  maxMs?: number;
  /** What the receiver asked for (Retry-After), or null. */
  retryAfterMs?: number | null;
  /** In [0, 1), as Math.random. */
  random?: () => number;
};

/**
 * The delay before the next attempt, in whole milliseconds: drawn in [0, min(maxMs,
 * baseMs·2^attempt)], and never less than retryAfterMs. `attempt` counts the retries made
 * before this one: 0 for the first retry.
 */
export function retryDelayMs(attempt: number, options: RetryDelayOptions = {}): number {
  const { baseMs = 1_000, maxMs = 300_000, retryAfterMs = null, random = Math.random } = options;
  if (!Number.isFinite(attempt) || attempt < 0) throw new Error(`retry attempt must be a number from 0 up, not ${attempt}`);
  if (!(baseMs >= 0) || !(maxMs >= 0)) throw new Error(`retry delays must not be negative (baseMs ${baseMs}, maxMs ${maxMs})`);
  // 2 ** 1100 is Infinity: min() still gives maxMs.
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.floor(attempt));
  const drawn = Math.min(1, Math.max(0, random())) * ceiling;
  return Math.round(Math.max(drawn, retryAfterMs ?? 0));
}
