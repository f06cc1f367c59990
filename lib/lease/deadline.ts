// Every backend call has a deadline and honours the caller's signal: nothing waits forever.
import { BackendUnavailableError, LeaseAbortedError } from './errors';

export const DEFAULT_CALL_TIMEOUT_MS = 5_000;

export function throwIfAborted(signal: AbortSignal | undefined) {
  if (signal?.aborted) throw new LeaseAbortedError(signal.reason);
}

/**
 * Runs `work` and settles with it, unless the caller's signal fires first (LeaseAbortedError)
 * or the deadline passes first (BackendUnavailableError). The work is not interrupted on
 * the backend: like a lost reply, its outcome stays unknown to us, which is why every
 * mutation is a compare-and-set on the holder and token.
 */
export function withDeadline<T>(
  backend: string,
  what: string,
  timeoutMs: number,
  signal: AbortSignal | undefined,
  work: (deadline: Date) => Promise<T>,
): Promise<T> {
  throwIfAborted(signal);
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const finish = (settle: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      settle();
    };
    const onAbort = () => finish(() => reject(new LeaseAbortedError(signal?.reason)));
    const timer = setTimeout(
      () => finish(() => reject(new BackendUnavailableError(backend, `${what} took longer than ${timeoutMs} ms`))),
      timeoutMs,
    );
    signal?.addEventListener('abort', onAbort, { once: true });
    work(new Date(Date.now() + timeoutMs)).then(
      (value) => finish(() => resolve(value)),
      (error: unknown) => finish(() => reject(error)),
    );
  });
}

/** Sleeps, waking early (with LeaseAbortedError) when the signal fires. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  throwIfAborted(signal);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new LeaseAbortedError(signal?.reason));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The local monotonic clock, in ms. Lease validity is judged on it, never on wall clocks. */
export function monotonicNow(): number {
  return performance.now();
}

/**
 * A signal that aborts when `parent` does or after `ms`, whichever comes first. Call
 * `dispose` when done: unlike AbortSignal.any, it leaves no listener on a long-lived parent.
 */
export function linkedTimeout(parent: AbortSignal, ms: number): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const onAbort = () => controller.abort(parent.reason);
  if (parent.aborted) controller.abort(parent.reason);
  else parent.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(() => controller.abort(new Error(`timed out after ${ms} ms`)), ms);
  return {
    signal: controller.signal,
    dispose() {
      clearTimeout(timer);
      parent.removeEventListener('abort', onAbort);
    },
  };
}
