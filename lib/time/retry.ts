// The one retry loop: the collector (loading a source, writing to the store, restarting an
// observer), the relay (listening for other processes' notifications) and boot (opening the
// store) all try again the same way: a growing delay with jitter (cockatiel's decorrelated
// exponential backoff), a wait that ends when the signal aborts, and a line saying why.
import { ExponentialBackoff, type IBackoff } from 'cockatiel';
import { systemClock, type Clock } from './clock';

export type RetryOptions = {
  /** What is being tried, for the log line ("writing redis-main to the store"). */
  what: string;
  /** Stops the retries: `retrying` then resolves undefined. */
  signal: AbortSignal;
  /** First delay; it grows towards maxDelayMs, with jitter, and is never shorter than this. */
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** An attempt that ran at least this long before failing starts the delays over (a long-lived observer that fails after hours waits initialDelayMs again). */
  resetAfterMs?: number;
  /** Errors that are not worth another attempt: rethrown at once. */
  fatal?: (error: unknown) => boolean;
  /** Told of every failure before its delay. */
  onFailure?: (failure: { what: string; error: unknown; attempt: number; delayMs: number }) => void;
  clock?: Clock;
};

/**
 * The delays of one run of retries: initialDelayMs, growing towards maxDelayMs, with jitter.
 * Cockatiel's decorrelated jitter may draw less than its initial delay: the caller decides
 * whether that is a floor (retrying() keeps it one).
 */
export function backoffDelays(initialDelayMs: number, maxDelayMs: number): () => number {
  let backoff: IBackoff<unknown> | null = null;
  return () => {
    backoff = backoff ? backoff.next(undefined) : new ExponentialBackoff({ initialDelay: initialDelayMs, maxDelay: Math.max(initialDelayMs, maxDelayMs) }).next();
    return Math.round(backoff.duration);
  };
}

/** Runs `work` until it succeeds (its value), fails after the signal aborted (undefined), or fails fatally (thrown). */
export async function retrying<T>(work: () => Promise<T>, options: RetryOptions): Promise<T | undefined> {
  const clock = options.clock ?? systemClock;
  const initialDelayMs = options.initialDelayMs ?? 200;
  const maxDelayMs = Math.max(initialDelayMs, options.maxDelayMs ?? 5_000);
  let next = backoffDelays(initialDelayMs, maxDelayMs);
  // The first attempt is made even when the signal has aborted already: a last write while
  // stopping (the renewals of the final minute) still goes, it is only not retried.
  for (let attempt = 1; ; attempt++) {
    const started = clock.mono();
    try {
      return await work();
    } catch (error) {
      if (options.fatal?.(error)) throw error;
      if (options.signal.aborted) return undefined;
      if (options.resetAfterMs !== undefined && clock.mono() - started >= options.resetAfterMs) next = backoffDelays(initialDelayMs, maxDelayMs);
      const delayMs = Math.min(maxDelayMs, Math.max(initialDelayMs, next()));
      options.onFailure?.({ what: options.what, error, attempt, delayMs });
      await clock.sleep(delayMs, options.signal);
      // Aborted during the wait: no attempt after the stop.
      if (options.signal.aborted) return undefined;
    }
  }
}

/** "writing x failed (reason); retrying in 400 ms": the line a failure is logged with. */
export const retryLine = ({ what, error, delayMs }: { what: string; error: unknown; delayMs: number }) =>
  `${what} failed (${(error as Error)?.message ?? error}); retrying in ${delayMs} ms`;
