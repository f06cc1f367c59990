// Time as the collector, the relay and boot see it: a monotonic clock for durations, the wall
// clock for timestamps people read, and waits that end early when their signal aborts. Passed
// in, so that their tests run on a clock they move by hand (tests/support/manual-clock.ts)
// instead of sleeping.
export type Clock = {
  /** Monotonic milliseconds (performance.now()): for durations and deadlines. */
  mono(): number;
  /** Epoch milliseconds (Date.now()): for timestamps. */
  wall(): number;
  /** Resolves after `ms`, or as soon as `signal` aborts; never rejects. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
};

/**
 * The longest delay a Node timer keeps (2^31 - 1 ms, 24.8 days): a longer one is taken as 1 ms,
 * so a timer set for a lease with a forty-day TTL would fire a thousand times a second. Timers
 * wait at most this long and look again.
 */
export const MAX_TIMER_MS = 2_147_483_647;

/** A delay a timer keeps: `ms` within 0 and MAX_TIMER_MS (NaN as 0). */
export const timerDelay = (ms: number): number => (ms > 0 ? Math.min(ms, MAX_TIMER_MS) : 0);

export const systemClock: Clock = {
  mono: () => performance.now(),
  wall: () => Date.now(),
  // A sleep past MAX_TIMER_MS ends early (there is no such sleep in Leasehold: polls and backoffs are short).
  sleep: (ms, signal) => (signal?.aborted ? Promise.resolve() : sleepUnlessAborted(timerDelay(ms), signal)),
};

/**
 * A timer and an abort listener, not timers/promises: that one rejects an aborted sleep with
 * a new AbortError (a stack captured), and the read lanes' alarms are woken by every pushed
 * hint (thousands a second at 100,000 leases: 0.4 s of a 20 s run went to those errors).
 */
function sleepUnlessAborted(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** What an alarm's sleep is woken with: one reason made once, not an AbortError made per wake. */
const WOKEN = new Error('woken');

/**
 * A sleep that something else can cut short: the collector's read lanes sleep until their
 * next poll, and a pushed change hint wakes them at once.
 */
export class Alarm {
  private ring: (() => void) | null = null;

  constructor(private readonly clock: Clock) {}

  /** Resolves after `ms`, when the signal aborts, or when wake() is called, whichever is first. */
  async sleep(ms: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    // One controller per sleep, told of the parent's abort by a listener that is removed after:
    // not AbortSignal.any on a long-lived signal, which Node 20 keeps alive (nodejs/node#55351).
    const woken = new AbortController();
    const onAbort = () => woken.abort(WOKEN);
    signal.addEventListener('abort', onAbort, { once: true });
    this.ring = onAbort;
    try {
      await this.clock.sleep(ms, woken.signal);
    } finally {
      this.ring = null;
      signal.removeEventListener('abort', onAbort);
    }
  }

  /** Ends the sleep in progress, if any (a wake with nobody asleep is not kept). */
  wake(): void {
    this.ring?.();
  }
}

/**
 * Settles with `work`, or rejects as soon as `signal` aborts, whether or not the work listens
 * to it: a read stuck in a driver cannot hold the observer.
 */
export function unlessAborted<T>(work: Promise<T>, signal: AbortSignal, reason: () => Error): Promise<T> {
  work.catch(() => {}); // settles later, unobserved, when it was given up on
  if (signal.aborted) return Promise.reject(reason());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(reason());
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * A signal that aborts when `parent` does or `ms` have passed on `clock`, whichever is first.
 * dispose() when the work is done, so the wait ends with it.
 */
export function deadlineOf(clock: Clock, parent: AbortSignal, ms: number): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  // Ends the wait for the deadline: on dispose, or when the parent aborts (no AbortSignal.any,
  // see Alarm.sleep).
  const stopTimer = new AbortController();
  const onAbort = () => {
    controller.abort(parent.reason);
    stopTimer.abort(WOKEN);
  };
  if (parent.aborted) onAbort();
  else parent.addEventListener('abort', onAbort, { once: true });
  void clock.sleep(ms, stopTimer.signal).then(() => {
    if (!stopTimer.signal.aborted) controller.abort(new Error(`timed out after ${ms} ms`));
  });
  return {
    signal: controller.signal,
    dispose() {
      stopTimer.abort(WOKEN);
      parent.removeEventListener('abort', onAbort);
    },
  };
}

/**
 * A deadline that a read moving forward pushes back: the signal aborts when `parent` does, when
 * `idleMs` pass without a call to progress(), or when `maxMs` pass in all, whichever is first.
 * For a read of many batches: one that keeps answering is slow, not down; one that goes silent
 * for `idleMs` is down. Work that never calls progress() is bounded by `idleMs` from its start,
 * as with deadlineOf. `reason()` says which ran out.
 */
export function progressDeadlineOf(
  clock: Clock,
  parent: AbortSignal,
  idleMs: number,
  maxMs: number,
): { signal: AbortSignal; progress: () => void; reason: () => 'idle' | 'total' | null; dispose: () => void } {
  let lastProgressAt = clock.mono();
  let ranOut: 'idle' | 'total' | null = null;
  const controller = new AbortController();
  const stopTimer = new AbortController(); // ends the idle timer: on dispose, or once aborted
  const outer = deadlineOf(clock, parent, maxMs);
  const onOuter = () => {
    if (!parent.aborted) ranOut ??= 'total';
    controller.abort(outer.signal.reason);
    stopTimer.abort(WOKEN);
  };
  if (outer.signal.aborted) onOuter();
  else outer.signal.addEventListener('abort', onOuter, { once: true });
  // One timer at a time: it wakes when the idle time would be up, and sleeps again if progress came meanwhile.
  void (async () => {
    while (!stopTimer.signal.aborted) {
      const left = lastProgressAt + idleMs - clock.mono();
      if (left <= 0) {
        ranOut = 'idle';
        controller.abort(new Error(`no progress for ${idleMs} ms`));
        outer.dispose();
        return;
      }
      await clock.sleep(left, stopTimer.signal);
    }
  })();
  return {
    signal: controller.signal,
    progress: () => {
      lastProgressAt = clock.mono();
    },
    reason: () => ranOut,
    dispose() {
      stopTimer.abort(WOKEN);
      outer.signal.removeEventListener('abort', onOuter);
      outer.dispose();
    },
  };
}

/** Items a long loop goes through before it lets the event loop run (about a few ms of work each time). */
export const ITEMS_PER_BREATH = 500;

/**
 * Lets timers, I/O and other reads run in the middle of long synchronous work over many
 * items (100,000 leases): a loop awaits it every ITEMS_PER_BREATH items.
 */
export const breathe = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
