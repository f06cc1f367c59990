// Deadline timers (docs/alerts.md): a held lease has a deadline on the collector's
// monotonic clock (its expiry estimate, plus the estimate's own uncertainty). When it passes
// and no renewal or release has been seen, the lease is read again at once, alone (the source's
// readKeys), so that a missed renewal is confirmed now, not at the next poll, and not when the
// backend gets round to expiring the key. One timer for the earliest deadline, over a heap.
import { TIMING_SLACK_MS, type TrackedLease } from '../domain/tracked-lease';
import { timerDelay, type Clock } from '../time/clock';
import { DueQueue } from '../time/due-queue';

/** After a targeted read still showed the lease held, it is read again this much later, a few times. */
const RECHECK_MS = [20, 40, 80, 160, 320];

export class DeadlineTimers {
  /** The deadline armed per key, and how many re-checks it has had; when each is due is in `queue`. */
  private readonly armed = new Map<string, { deadline: number; checks: number }>();
  private readonly queue = new DueQueue<string>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private timerAt = Infinity;
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    /** Called with the keys whose deadline passed: read them now. */
    private readonly onDue: (keys: string[]) => void,
  ) {}

  /** Arms (or re-arms, or disarms) a lease's deadline from its picture after a read. */
  track(lease: TrackedLease): void {
    if (lease.state !== 'held' || lease.stale || lease.expiresAtMono === null) {
      this.armed.delete(lease.key);
      this.queue.delete(lease.key);
      return;
    }
    const at = lease.expiresAtMono + lease.expiryUncertaintyMs + TIMING_SLACK_MS + 1;
    const current = this.armed.get(lease.key);
    // A read that showed the same deadline again, within what the reading may be off by (etcd
    // counts whole seconds), keeps the re-checks going: it is not a renewal, and re-arming from
    // scratch would read it again and again.
    if (current && current.checks > 0 && Math.abs(current.deadline - at) <= lease.expiryUncertaintyMs + TIMING_SLACK_MS) return;
    this.arm(lease.key, at, at, 0);
  }

  /** Every deadline disarmed (the source is down: nothing is judged until it answers again). */
  clear(): void {
    this.armed.clear();
    this.queue.clear();
    this.reschedule();
  }

  stop(): void {
    this.stopped = true;
    this.clear();
  }

  get size(): number {
    return this.armed.size;
  }

  private arm(key: string, at: number, deadline: number, checks: number) {
    this.armed.set(key, { deadline, checks });
    this.queue.set(key, at);
    if (at < this.timerAt) this.reschedule();
  }

  private reschedule() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.timerAt = this.stopped ? Infinity : this.queue.nextAt();
    if (this.timerAt === Infinity) return;
    // A deadline beyond what a timer keeps (a TTL of forty days) is looked at again after 24.8 days.
    this.timer = setTimeout(() => this.fire(), timerDelay(this.timerAt - this.clock.mono()));
    this.timer.unref?.();
  }

  private fire() {
    this.timer = null;
    this.timerAt = Infinity;
    const now = this.clock.mono();
    const due = this.queue.takeDue(now);
    for (const key of due) {
      const armed = this.armed.get(key)!;
      // Read again a little later if this read still shows it held with this deadline
      // (track() replaces this when the lease changes); then the polls take over.
      if (armed.checks < RECHECK_MS.length) {
        this.armed.set(key, { deadline: armed.deadline, checks: armed.checks + 1 });
        this.queue.set(key, now + RECHECK_MS[armed.checks]!);
      } else this.armed.delete(key);
    }
    if (due.length > 0) this.onDue(due);
    this.reschedule();
  }
}
