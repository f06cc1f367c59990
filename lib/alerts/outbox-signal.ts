// Wakes this process's delivery worker the moment something is put in the outbox, so a
// delivery does not wait for the worker's next look (other processes look every second).
const state = globalThis as typeof globalThis & { __leaseholdOutboxWaiters?: Set<() => void> };
const waiters = (state.__leaseholdOutboxWaiters ??= new Set());

export function outboxChanged(): void {
  for (const wake of [...waiters]) wake();
}

/** Resolves at the next outboxChanged(), after `ms`, or when `signal` aborts. */
export function nextOutboxChange(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      waiters.delete(done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    waiters.add(done);
    signal.addEventListener('abort', done, { once: true });
    if (signal.aborted) done();
  });
}
