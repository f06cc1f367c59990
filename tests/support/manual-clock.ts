// A Clock (lib/time/clock.ts) that moves only when a test moves it: sleeps resolve in time
// order as advance() passes them, and nothing waits on real time.
import type { Clock } from '@/lib/time/clock';

type Sleeper = { at: number; resolve: () => void };

export class ManualClock implements Clock {
  private now = 0;
  private sleepers: Sleeper[] = [];

  constructor(private readonly wallAtZero = 1_800_000_000_000) {}

  mono = () => this.now;
  wall = () => this.wallAtZero + this.now;

  sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
    new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const sleeper: Sleeper = { at: this.now + Math.max(0, ms), resolve: () => {} };
      const done = () => {
        this.sleepers = this.sleepers.filter((s) => s !== sleeper);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      sleeper.resolve = done;
      signal?.addEventListener('abort', done, { once: true });
      this.sleepers.push(sleeper);
    });

  /** How many sleeps are waiting. */
  get sleeping(): number {
    return this.sleepers.length;
  }

  /** Moves time forward by `ms`, waking each sleep when its time comes and letting what it started run. */
  async advance(ms: number): Promise<void> {
    const target = this.now + ms;
    await settle();
    for (;;) {
      const next = this.sleepers.filter((s) => s.at <= target).sort((a, b) => a.at - b.at)[0];
      if (!next) break;
      this.now = Math.max(this.now, next.at);
      next.resolve();
      await settle();
    }
    this.now = target;
    await settle();
  }
}

/** Lets every promise chain that can move on without time do so. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
