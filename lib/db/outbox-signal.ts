// Wakes the delivery worker that shares this store object the moment something is put in the
// outbox, so a delivery does not wait for the worker's next look (other processes look every
// second). Changes are counted too: a worker notes the count before it looks, and a change made
// while it was looking (its claim's snapshot may have missed the row) sends it to look again at
// once instead of sleeping through it. One signal per opened store (Store.outbox).

export type OutboxSignal = {
  /** Something was put in the outbox (or became due): wake the worker. */
  changed(): void;
  /** How many times the outbox has changed so far. */
  changes(): number;
  /** Resolves at the next changed(), after `ms`, or when `signal` aborts; at once if it changed since `seen` (a changes() count). */
  next(ms: number, signal: AbortSignal, seen?: number): Promise<void>;
};

export function createOutboxSignal(): OutboxSignal {
  const waiters = new Set<() => void>();
  let count = 0;
  return {
    changed() {
      count += 1;
      for (const wake of [...waiters]) wake();
    },
    changes: () => count,
    next(ms, signal, seen) {
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
        if (signal.aborted || (seen !== undefined && seen !== count)) done();
      });
    },
  };
}
