// Wakes this process's delivery worker the moment something is put in the outbox, so a
// delivery does not wait for the worker's next look (other processes look every second).
// Changes are counted too: a worker notes the count before it looks, and a change made while
// it was looking (its claim's snapshot may have missed the row) sends it to look again at once
// instead of sleeping through it.
const state = globalThis as typeof globalThis & { __leaseholdOutboxWaiters?: Set<() => void>; __leaseholdOutboxChanges?: { count: number } };
const waiters = (state.__leaseholdOutboxWaiters ??= new Set());
const changes = (state.__leaseholdOutboxChanges ??= { count: 0 });

export function outboxChanged(): void {
  changes.count += 1;
  for (const wake of [...waiters]) wake();
}

/** How many times the outbox has changed in this process so far. */
export function outboxChanges(): number {
  return changes.count;
}

/** Resolves at the next outboxChanged(), after `ms`, or when `signal` aborts; at once if it changed since `seen` (an outboxChanges() count). */
export function nextOutboxChange(ms: number, signal: AbortSignal, seen?: number): Promise<void> {
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
    if (signal.aborted || (seen !== undefined && seen !== changes.count)) done();
  });
}
