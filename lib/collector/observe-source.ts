// Observing one source: read it (read-lanes.ts), turn each read into history with
// lib/domain, write that to the store (write-queue.ts, renewal-batcher.ts), and tell the live
// stream. A read is applied as it completes, a slice at a time, each slice synchronously; a
// lease only moves forward by a read begun after the one it last came from; writes go in the
// order slices were applied. A failed full read makes the source down and its leases stale,
// nothing else: the next good read is compared with the last as "after a gap", so no expiry,
// release or failover is invented. A down source's row is written when its status changes.
import type { AlertEngine } from '../alerts/engine';
import type { DeadlineTimers } from '../alerts/deadlines';
import type { Store } from '../db';
import { applyRead } from '../domain/apply-read';
import type { Observation, ReadContext, TrackedLease } from '../domain/observe';
import { leaseView } from '../domain/views';
import type { Bus } from '../live/bus';
import { metrics } from '../metrics';
import { SourceUnavailableError } from '../sources/errors';
import type { LeaseSource, PollResult, UnreadScope } from '../sources/types';
import { systemClock, type Clock } from '../time/clock';
import { retrying } from '../time/retry';
import { countStates, deadlineTimers, hideUnread, observedUnchanged, publishWritten, refusedAgain, slicesOf, storeRetry, type Slice } from './observe-parts';
import { ReadLanes, type Handed, type ReadStart } from './read-lanes';
import { piecesOf, RenewalBatcher } from './renewal-batcher';
import { SourceHealth } from './source-health';
import { loadSource, writeBatchSalvaging, type LoadedSource, type WriteBatch, type WrittenEvent } from '../db/observer-writes';
import { createWriteQueue, emptyBatch, MERGE_LIMIT, type WriteQueue } from './write-queue';

export { MAX_BACKOFF_MS, MAX_FULL_READ_DEADLINE_MS, nextFullReadDeadlineMs, readDeadlineMs } from './read-lanes';

export type ObserveOptions = {
  store: Store;
  source: LeaseSource;
  collectorId: string;
  /** Fencing token of this collector's ownership of the source (0 when nobody else can write). */
  token: bigint;
  ringSize: number;
  log: (line: string) => void;
  /** Alert rules are fed what each read changed, when alerts are on. */
  alerts?: AlertEngine;
  /** Called after every read is applied and written (for benchmarks and diagnostics). */
  onRead?: (read: ReadReport) => void;
  /** false: no deadline timers; a missed renewal is seen at the next read (the benchmark's peer, bench/alerts-bench.ts). Default on. */
  deadlineTimers?: false;
  clock?: Clock;
  /** Where what changed is published (the collector's bus). */
  bus: Bus;
};

export type ReadReport = { source: string; kind: CompletedRead['kind']; /* a full read, a poll, a targeted read */ ok: boolean; leases: number; changed: number; events: number; durationMs: number };

/** One completed read, as the lanes hand it over. kind: full, a snapshot of everything; poll, a liveness check with what changed; keys, hinted keys only. */
type CompletedRead = ReadStart & {
  kind: 'full' | 'poll' | 'keys';
  observations: Observation[];
  covered?: string[]; whole?: boolean; // the keys a partial read speaks for; whole: and the rest of its tables, read unchanged (PostgreSQL)
  /** What the backend says of itself (etcd's Raft status), with full reads and some polls. */
  detail?: Record<string, unknown> | null;
  /** Parts of a full read that could not be read: their leases are not gone, only not seen. */
  unread?: UnreadScope[];
};

/** Observes until `signal` aborts. Throws StaleOwnerError when another collector has taken the source over. */
export async function observeSource(options: ObserveOptions, signal: AbortSignal): Promise<void> {
  const clock = options.clock ?? systemClock;
  // Exported from the start at 0: a rate() over a series that appears with its first failure
  // misses that failure, and a dashboard cannot tell "none yet" from "not collected".
  metrics.inc('leasehold_read_failures_total', { source: options.source.name }, 0);
  // 1. Start from what the store knows. Whatever happened since it was written, we did not see.
  const loaded = await retrying(() => loadSource(options.store, options.source.name, clock.mono(), clock.wall()), storeRetry(options, signal, clock, 'loading the source from the store'));
  if (!loaded) return;
  // 2. This source's open alerts are this process's to clear now.
  await options.alerts?.adopt(options.source.name);
  // 3. Observe: read, apply, write, tell.
  try {
    await new SourceObserver(options, signal, clock, loaded).run();
  } finally {
    options.alerts?.release(options.source.name);
  }
}

class SourceObserver {
  private readonly source: LeaseSource;
  private readonly labels: { source: string };
  private readonly known: Map<string, TrackedLease>;
  private readonly health: SourceHealth;
  /** Reads are judged as after a gap (at start, after an outage or a gap hint) until a full read begun at or after gapSinceMono. */
  private afterGap: boolean;
  private gapSinceMono = -Infinity;
  /** Set when a write finds another collector owns the source: everything stops and it is thrown. */
  private stopWith: unknown = null;
  // Two ordered write queues: state changes, and renewals (batched once a second). The
  // renewals wait for the last state-change write queued, so a lease's first row and events
  // are in the store before its renewal samples (which refer to it) are written.
  private readonly changesQueue: WriteQueue;
  private readonly renewalsQueue: WriteQueue;
  private changesWritten: Promise<unknown> = Promise.resolve();
  private readonly renewals: RenewalBatcher;
  private readonly lanes: ReadLanes;
  /** Each held lease's deadline: when it passes with no renewal seen, the lease is read again at once (null when turned off). */
  private readonly deadlines: DeadlineTimers | null;

  constructor(
    private readonly options: ObserveOptions,
    private readonly signal: AbortSignal,
    private readonly clock: Clock,
    loaded: LoadedSource,
  ) {
    this.source = options.source;
    this.labels = { source: options.source.name };
    this.known = new Map(loaded.leases.map((lease) => [lease.key, lease]));
    options.alerts?.watch(options.source.name, this.known);
    this.health = new SourceHealth(options.source, loaded, clock);
    this.afterGap = this.known.size > 0;
    const stop = (error: unknown) => (this.stopWith ??= error);
    const waiting = (queue: string) => (rows: number) => metrics.set('leasehold_write_queue_rows', { ...this.labels, queue }, rows);
    this.changesQueue = createWriteQueue((batch) => this.write(batch), stop, waiting('changes'));
    this.renewalsQueue = createWriteQueue((batch) => this.write(batch), stop, waiting('renewals'));
    this.renewals = new RenewalBatcher(clock);
    // The lanes decide when to read; this observer what a read means.
    this.lanes = new ReadLanes(
      options.source,
      {
        onFullRead: (result, start) => this.onFullRead(result, start),
        onGap: () => this.markGap(),
        onFullFailure: (error, start) => this.sourceDown(error, start),
        onKeysRead: (result, start) => this.applyAndWrite({ ...start, kind: 'keys', observations: result.observations, covered: result.covered }),
        isDown: () => this.health.up === false,
        afterGap: () => this.afterGap,
        stopped: () => this.stopWith !== null,
        log: options.log,
      },
      clock,
    );
    this.deadlines = options.deadlineTimers === false ? null : deadlineTimers(this.source, this.lanes, clock);
    for (const lease of this.known.values()) this.deadlines?.track(lease);
  }

  async run(): Promise<void> {
    const watching = this.source.watch?.(this.lanes.hint, this.signal, { expiries: this.deadlines !== null });
    const stopDeadlines = () => this.deadlines?.stop();
    this.signal.addEventListener('abort', stopDeadlines, { once: true });
    try {
      await Promise.all([this.lanes.run(this.signal), this.renewals.run(this.signal, () => this.stopWith !== null, () => this.flushRenewals())]);
      await this.flushRenewals(true);
      await Promise.all([this.changesQueue.idle(), this.renewalsQueue.idle()]);
      if (this.stopWith) throw this.stopWith;
    } finally {
      this.deadlines?.stop();
      this.signal.removeEventListener('abort', stopDeadlines);
      for (const name of ['leasehold_tracked_leases', 'leasehold_write_queue_rows'] as const) metrics.clear(name, this.labels);
      await watching?.catch(() => {});
    }
  }

  private enqueue(batch: WriteBatch) {
    return (this.changesWritten = this.changesQueue.enqueue(batch));
  }

  /** What is due of renewals, in batches of at most MERGE_LIMIT rows (10,000 renewals a second are many); the source's row is the other queue's to write. */
  private async flushRenewals(closing = false) {
    const due = this.renewals.take(closing);
    if (!due) return;
    await this.changesWritten;
    await Promise.all(
      piecesOf(due, MERGE_LIMIT).map(async (piece) => {
        if (!(await this.renewalsQueue.enqueue({ ...emptyBatch(this.options, null), ...piece, renewedOnly: true }))) return;
        for (const lease of piece.dirty) this.options.bus.publish({ type: 'lease', lease: leaseView(lease, this.clock.wall()) });
      }),
    );
  }

  /** What was seen until now may have missed events: judge across a gap until a full read begun after now. */
  private markGap() {
    this.afterGap = true;
    this.gapSinceMono = this.clock.mono();
  }

  private async onFullRead(result: PollResult, start: ReadStart): Promise<Handed> {
    const completed: CompletedRead =
      result.kind === 'full'
        ? { ...start, kind: 'full', observations: result.observations, detail: result.status, unread: result.unread }
        : { ...start, kind: 'poll', observations: result.observations, covered: result.covered, whole: !!result.unchangedUnder?.length, detail: result.status ?? null };
    const handed = await this.applyAndWrite(completed);
    if (result.kind === 'partial') await observedUnchanged(this.known, result.unchangedUnder, result.covered, start);
    this.options.alerts?.sourceStatus(this.source.name, true, null);
    // Leases the store refused are offered again now and then: what refused them may have been fixed.
    const refused = refusedAgain(this.health, this.known, this.source.name);
    if (refused.length) void this.enqueue({ ...emptyBatch(this.options, null), dirty: refused });
    metrics.set('leasehold_source_up', this.labels, 1);
    countStates(this.source.name, this.known);
    return handed;
  }

  /**
   * Applies a completed read and queues its writes (`written`: once they are in and the read is
   * reported). A large read is applied a slice at a time, each slice synchronously and written
   * in turn, with the event loop free between slices: a pushed change does not wait behind
   * 100,000 unchanged leases.
   */
  private async applyAndWrite(r: CompletedRead): Promise<Handed> {
    const { known, source, clock } = this;
    const full = r.kind === 'full';
    const unread = r.unread ?? [];
    const read: ReadContext = { source: source.name, backend: source.backend, startedMono: r.startedMono, startedWall: r.startedWall, finishedMono: clock.mono(), afterGap: this.afterGap };
    const hidden = hideUnread(this.known, unread); // 1. leases of an unread part: stale, and compared across a gap when seen again
    const unseen = (key: string) => unread.some((part) => key.startsWith(part.prefix));
    if (hidden.length) this.options.alerts?.staled(hidden);
    for (const lease of hidden) this.deadlines?.track(lease);
    const slices = slicesOf(r.observations, full ? [...known.keys()].filter((key) => !unseen(key)) : (r.covered ?? []));
    const total = { changed: 0, events: 0 };
    const writes: Promise<void>[] = [];
    // 3. The source answered: its row goes with the first slice and the last; source_up and unstaled leases with the last.
    const answer = this.health.answered(r, full || r.whole ? Math.round(clock.mono() - r.startedMono) : null);
    for (let i = 0; i < slices.length; i++) {
      if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve));
      const { applied, batch } = this.applySlice(r, read, slices[i]!, answer, { first: i === 0, last: i === slices.length - 1, hidden });
      [total.changed, total.events] = [total.changed + applied.dirty.length, total.events + applied.events.length];
      // 5. A read that changed nothing (or only renewed) writes nothing now, but for the source's row when due.
      const idle = !(batch.source && answer.rowDue) && batch.dirty.length === 0 && batch.events.length === 0 && batch.sourceEvents.length === 0;
      if (!idle) writes.push(this.enqueue(batch).then((written) => publishWritten(this.options.bus, this.clock.wall(), applied, batch.dirty, written)));
    }
    if (full && r.startedMono >= this.gapSinceMono) this.afterGap = false;
    return { written: Promise.all(writes).then(() => this.report(r, total)) };
  }

  /** One slice of a read applied (synchronously): alerts, deadlines and renewals told, its write made ready. */
  private applySlice(r: CompletedRead, read: ReadContext, slice: Slice, answer: ReturnType<SourceHealth['answered']>, at: { first: boolean; last: boolean; hidden: TrackedLease[] }) {
    const { known } = this;
    // 2. A lease already moved forward by a read that started later (the other lane, or
    //    between two slices) keeps that newer picture: this read is older news about it.
    const isNewer = (key: string) => (known.get(key)?.observedAtMono ?? -Infinity) > r.startedMono;
    const older = new Set(slice.scope.filter(isNewer));
    for (const o of slice.observations) if (isNewer(o.key)) older.add(o.key);
    const applied = applyRead(known, older.size ? slice.observations.filter((o) => !older.has(o.key)) : slice.observations, read, older.size ? slice.scope.filter((key) => !older.has(key)) : slice.scope);
    this.options.alerts?.observed(applied); // alert rules see what changed; deadlines follow each lease's new picture
    for (const lease of applied.dirty) this.deadlines?.track(lease);
    const batch = emptyBatch(this.options, at.first || at.last ? answer.row : null);
    if (at.last && answer.sourceEvents.length) {
      this.options.log(`${this.source.name}: up again`);
      batch.sourceEvents = answer.sourceEvents;
      batch.setStale = r.unread?.length ? undefined : false; // some leases stay stale: marked one by one above
    }
    // 4. State changes go now; renewals join the next one-second batch.
    batch.dirty = [...(at.first ? at.hidden : []), ...applied.dirty.filter((lease) => !applied.renewedOnly.has(lease))];
    batch.events = applied.events;
    this.renewals.add(applied.renewedOnly, applied.renewals);
    this.renewals.forget(batch.dirty);
    if (applied.renewals.length) metrics.inc('leasehold_renewals_total', this.labels, applied.renewals.length);
    return { applied, batch };
  }

  private async sourceDown(error: unknown, start: ReadStart) {
    const { source, clock } = this;
    const reason = error instanceof SourceUnavailableError ? error.reason : String((error as Error)?.message ?? error);
    metrics.inc('leasehold_read_failures_total', this.labels);
    metrics.set('leasehold_source_up', this.labels, 0);
    // Down: say so once, mark the leases stale, claim nothing else.
    this.markGap();
    const down = this.health.failed(reason, start.startedWall, Math.round(clock.mono() - start.startedMono));
    if (down?.newlyDown) {
      this.options.log(`${source.name}: down: ${reason}`);
      for (const lease of this.known.values()) lease.stale = true;
      // Nothing is judged of a source that cannot be read: no deadline passes, no rule fires on its leases.
      this.deadlines?.clear();
      this.options.alerts?.staled(this.known.values());
    }
    this.options.alerts?.sourceStatus(source.name, false, reason);
    if (down) await this.enqueue({ ...emptyBatch(this.options, down.row), sourceEvents: down.sourceEvents, ...(down.newlyDown ? { setStale: true } : {}) });
    this.options.onRead?.({ source: source.name, kind: 'full', ok: false, leases: this.known.size, changed: 0, events: 0, durationMs: clock.mono() - start.startedMono });
  }

  /** Once a read's writes are in: its time (a poll's is its read's, comparison's and write's) and what it changed. */
  private report(r: CompletedRead, total: { changed: number; events: number }) {
    const durationMs = this.clock.mono() - r.startedMono;
    if (r.kind === 'full' || r.whole) metrics.observe('leasehold_poll_duration_seconds', this.labels, durationMs / 1000);
    this.options.onRead?.({ source: this.source.name, kind: r.kind, ok: true, leases: this.known.size, ...total, durationMs });
  }

  private async write(batch: WriteBatch): Promise<WrittenEvent[] | undefined> {
    const { source } = this;
    for (const event of batch.events) metrics.inc('leasehold_events_total', { source: source.name, type: event.change.type });
    for (const event of batch.sourceEvents) metrics.inc('leasehold_events_total', { source: source.name, type: event.type });
    const outcome = await retrying(() => writeBatchSalvaging(this.options.store, batch), storeRetry(this.options, this.signal, this.clock, `writing ${source.name} to the store`));
    if (!outcome) return undefined;
    const { refused } = outcome;
    if (refused.length) {
      metrics.inc('leasehold_store_refused_leases_total', { source: source.name }, refused.length);
      this.options.log(`${source.name}: the store refused ${refused.length} lease${refused.length === 1 ? '' : 's'} (${refused[0]!.leaseId}: ${refused[0]!.reason})`);
    }
    const row = this.health.refusals(batch.dirty, refused);
    if (row) void this.enqueue(emptyBatch(this.options, row));
    // Told after the store has it (as leases and events are): a reader that hears it and reads
    // the store sees the source's leases marked. Every write of the source's row is told (a
    // change of status, and its "last good read" about once a second), so that pages show how
    // long ago the source was read, live, without asking.
    if (batch.source) this.options.bus.publish({ type: 'source', source: this.health.view(batch.source) });
    return outcome.written;
  }
}
