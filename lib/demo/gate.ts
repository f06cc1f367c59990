// What a simulated server's code passes through before each step: the demo's faults act
// here. A pause (a stop-the-world GC, a frozen VM) holds every step, lease calls included,
// until it ends; a crash makes every step fail from then on, so nothing more reaches the
// database (no release, no late write); `slowMs` delays each step.
import type { LeaseBackend } from '../lease';
import { systemClock } from '../time/clock';

export class ServerCrashed extends Error {
  constructor(server: string) {
    super(`${server} crashed`);
    this.name = 'ServerCrashed';
  }
}

export class Gate {
  private resumeAt = 0;
  private waiters: { resolve: () => void; reject: (error: Error) => void }[] = [];
  private timer: NodeJS.Timeout | null = null;
  crashed = false;

  constructor(readonly server: string) {}

  get paused(): boolean {
    return this.resumeAt > systemClock.wall();
  }

  /** Resolves when the server may take its next step; rejects once it has crashed. */
  pass(): Promise<void> {
    if (this.crashed) return Promise.reject(new ServerCrashed(this.server));
    if (!this.paused) return Promise.resolve();
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  pause(ms: number) {
    this.resumeAt = systemClock.wall() + ms;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.release(), ms);
  }

  crash() {
    this.crashed = true;
    if (this.timer) clearTimeout(this.timer);
    const waiting = this.waiters.splice(0);
    for (const waiter of waiting) waiter.reject(new ServerCrashed(this.server));
  }

  private release() {
    this.timer = null;
    this.resumeAt = 0;
    for (const waiter of this.waiters.splice(0)) waiter.resolve();
  }

  /** The lease backend as this server sees it: every call passes the gate first. */
  wrap(backend: LeaseBackend): LeaseBackend {
    const pass = () => this.pass();
    return {
      kind: backend.kind,
      minTtlMs: backend.minTtlMs,
      driftAllowanceMs: (ttlMs) => backend.driftAllowanceMs(ttlMs),
      tryAcquire: async (...args) => (await pass(), backend.tryAcquire(...args)),
      renew: async (...args) => (await pass(), backend.renew(...args)),
      release: async (...args) => (await pass(), backend.release(...args)),
      inspect: async (...args) => (await pass(), backend.inspect(...args)),
      close: async () => {},
    };
  }
}
