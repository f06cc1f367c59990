// Observing one source: read it (read-lanes.ts), turn each read into history with
// lib/domain, write that to the store (write-queue.ts, renewal-batcher.ts), and tell the live
// stream.
//
// Each read is applied the moment it completes (synchronously), and a lease is only ever
// moved forward by a read that started after the one it last came from; writes go to the
// store in the order reads were applied. A failed full read makes the source down and its
// leases stale, and nothing else: the next good read is compared with the last one as "after
// a gap", so no expiry, release or failover is invented. The store is written when the
// source's status changes, not at every failed attempt.
import type { Store } from '../db';
import { applyRead, type AppliedRead } from '../domain/apply-read';
import type { Observation, ReadContext, TrackedLease } from '../domain/observe';
import { eventView, leaseView } from '../domain/views';
import { publish } from '../live/bus';
import { metrics } from '../metrics';
import { SourceUnavailableError } from '../sources/errors';
import type { LeaseSource, UnreadScope } from '../sources/types';
import { systemClock, type Clock } from '../time/clock';
import { retrying, retryLine } from '../time/retry';
import { ReadLanes, type ReadStart } from './read-lanes';
import { RenewalBatcher } from './renewal-batcher';
import { SourceHealth } from './source-health';
import { StaleOwnerError, loadSource, writeBatchSalvaging, type WriteBatch, type WrittenEvent } from './store-writer';
import { createWriteQueue, emptyBatch } from './write-queue';

export { MAX_BACKOFF_MS, MAX_FULL_READ_DEADLINE_MS, nextFullReadDeadlineMs, readDeadlineMs } from './read-lanes';

export type ObserveOptions = {
  store: Store;
  source: LeaseSource;
  collectorId: string;
  /** Fencing token of this collector's ownership of the source (0 when nobody else can write). */
  token: bigint;
  ringSize: number;
  log: (line: string) => void;
  /** Called after every read is applied and written (for benchmarks and diagnostics). */
  onRead?: (read: ReadReport) => void;
  clock?: Clock;
};

export type ReadReport = { source: string; full: boolean; ok: boolean; leases: number; changed: number; events: number; durationMs: number };

/** One completed read, as the lanes hand it over. */
type CompletedRead = ReadStart & {
  /** full: a snapshot of everything; poll: a liveness check with what changed; keys: hinted keys only. */
  kind: 'full' | 'poll' | 'keys';
  observations: Observation[];
  /** The keys a partial read speaks for. */
  covered?: string[];
  gap?: boolean;
  /** What the backend says of itself (etcd's Raft status), with full reads and some polls. */
  detail?: Record<string, unknown> | null;
  /** Parts of a full read that could not be read: their leases are not gone, only not seen. */
  unread?: UnreadScope[];
};

/** Observes until `signal` aborts. Throws StaleOwnerError when another collector has taken the source over. */
export async function observeSource(options: ObserveOptions, signal: AbortSignal): Promise<void> {
  const { store, source, log } = options;
  const clock = options.clock ?? systemClock;
  const labels = { source: source.name };
  // Exported from the start at 0: a rate() over a series that appears with its first failure
  // misses that failure, and a dashboard cannot tell "none yet" from "not collected".
  metrics.inc('leasehold_read_failures_total', labels, 0);
  const storeRetry = (what: string) => ({
    what,
    signal,
    clock,
    fatal: (error: unknown) => error instanceof StaleOwnerError,
    onFailure: (failure: Parameters<typeof retryLine>[0]) => {
      metrics.inc('leasehold_store_write_failures_total', {});
      log(retryLine(failure));
    },
  });

  // 1. Start from what the store knows. Whatever happened since it was written, we did not see.
  const loaded = await retrying(() => loadSource(store, source.name, clock.mono(), clock.wall()), storeRetry('loading the source from the store'));
  if (!loaded) return;
  const known = new Map<string, TrackedLease>(loaded.leases.map((lease) => [lease.key, lease]));
  const health = new SourceHealth(source, loaded, clock);
  let afterGap = known.size > 0;

  // 2. Two ordered write queues: state changes, and renewals (batched once a second). The
  //    renewals wait for the last state-change write queued, so a lease's first row and events
  //    are in the store before its renewal samples (which refer to it) are written.
  let stopWith: unknown = null;
  const stop = (error: unknown) => (stopWith ??= error); // a StaleOwnerError stops the whole observer
  const changesQueue = createWriteQueue(write, stop);
  const renewalsQueue = createWriteQueue(write, stop);
  let changesWritten: Promise<unknown> = Promise.resolve();
  const enqueue = (batch: WriteBatch) => (changesWritten = changesQueue.enqueue(batch));
  const renewals = new RenewalBatcher(clock);
  const flushRenewals = async (closing = false) => {
    const due = renewals.take(closing);
    if (!due) return;
    const batch = { ...emptyBatch(options, null), ...due }; // the source's row is the other queue's to write
    await changesWritten;
    if (!(await renewalsQueue.enqueue(batch))) return;
    const nowWall = clock.wall();
    for (const lease of due.dirty) publish({ type: 'lease', lease: leaseView(lease, nowWall) });
  };

  // 3. Read: the lanes decide when, this observer what a read means.
  const lanes = new ReadLanes(
    source,
    {
      onFullRead: async (result, start, gap) => {
        const completed: CompletedRead =
          result.kind === 'full'
            ? { ...start, kind: 'full', observations: result.observations, gap, detail: result.status, unread: result.unread }
            : { ...start, kind: 'poll', observations: result.observations, covered: result.covered, detail: result.status ?? null };
        const outcome = await applyAndWrite(completed);
        retryRefused();
        metrics.set('leasehold_source_up', labels, 1);
        if (completed.kind === 'full') metrics.observe('leasehold_poll_duration_seconds', labels, (clock.mono() - start.startedMono) / 1000);
        countStates(source.name, known);
        report(completed, outcome);
      },
      onFullFailure: sourceDown,
      onKeysRead: async (result, start) => {
        const completed: CompletedRead = { ...start, kind: 'keys', observations: result.observations, covered: result.covered };
        report(completed, await applyAndWrite(completed));
      },
      isDown: () => health.up === false,
      afterGap: () => afterGap,
      stopped: () => stopWith !== null,
      log,
    },
    clock,
  );
  const watching = source.watch?.(lanes.hint, signal);

  /** Applies a completed read and queues its write; returns once it is written. */
  async function applyAndWrite(r: CompletedRead) {
    const full = r.kind === 'full';
    const unread = r.unread ?? [];
    const read: ReadContext = { source: source.name, backend: source.backend, startedMono: r.startedMono, startedWall: r.startedWall, finishedMono: clock.mono(), afterGap: afterGap || r.gap === true };
    // 1. Leases of an unread part are marked stale, and compared across a gap when seen again.
    const unseen = (key: string) => unread.some((part) => key.startsWith(part.prefix));
    const hidden: TrackedLease[] = [];
    for (const lease of known.values()) {
      if (lease.stale || !unseen(lease.key)) continue;
      lease.stale = true;
      lease.version += 1;
      hidden.push(lease);
    }
    // 2. A lease already moved forward by a read that started later (the other lane) keeps
    //    that newer picture: this read is older news about it.
    const isNewer = (key: string) => (known.get(key)?.observedAtMono ?? -Infinity) > r.startedMono;
    const scope = full ? [...known.keys()].filter((key) => !unseen(key)) : (r.covered ?? []);
    const older = new Set(scope.filter(isNewer));
    for (const o of r.observations) if (isNewer(o.key)) older.add(o.key);
    const applied = applyRead(
      known,
      older.size ? r.observations.filter((o) => !older.has(o.key)) : r.observations,
      read,
      older.size ? scope.filter((key) => !older.has(key)) : scope,
    );
    if (full) afterGap = false;
    // 3. The source answered: its row, and source_up if it was down.
    const answer = health.answered(r, full ? Math.round(clock.mono() - r.startedMono) : null);
    const batch = emptyBatch(options, answer.row);
    if (answer.sourceEvents.length) {
      log(`${source.name}: up again`);
      batch.sourceEvents = answer.sourceEvents;
      batch.setStale = false;
    }
    // 4. State changes go now; renewals join the next one-second batch.
    batch.dirty = [...hidden, ...applied.dirty.filter((lease) => !applied.renewedOnly.has(lease))];
    batch.events = applied.events;
    renewals.add(applied.renewedOnly, applied.renewals);
    renewals.forget(batch.dirty);
    if (applied.renewals.length) metrics.inc('leasehold_renewals_total', labels, applied.renewals.length);
    if (batch.setStale === false && unread.length) batch.setStale = undefined; // some leases stay stale: marked one by one above
    // 5. A keys-lane read that only saw renewals need not touch the store now. A read that
    //    changed nothing writes nothing, except that a poll refreshes the source's "last good
    //    read" once a second.
    const idle = !answer.rowDue && batch.dirty.length === 0 && batch.events.length === 0 && batch.sourceEvents.length === 0;
    return { applied, written: idle ? [] : await enqueue(batch), published: batch.dirty };
  }

  async function sourceDown(error: unknown, start: ReadStart) {
    const reason = error instanceof SourceUnavailableError ? error.reason : String((error as Error)?.message ?? error);
    metrics.inc('leasehold_read_failures_total', labels);
    metrics.set('leasehold_source_up', labels, 0);
    // Down: say so once, mark the leases stale, claim nothing else.
    afterGap = true;
    const down = health.failed(reason, start.startedWall, Math.round(clock.mono() - start.startedMono));
    if (down?.newlyDown) {
      log(`${source.name}: down: ${reason}`);
      for (const lease of known.values()) lease.stale = true;
    }
    if (down) await enqueue({ ...emptyBatch(options, down.row), sourceEvents: down.sourceEvents, ...(down.newlyDown ? { setStale: true } : {}) });
    options.onRead?.({ source: source.name, full: true, ok: false, leases: known.size, changed: 0, events: 0, durationMs: clock.mono() - start.startedMono });
  }

  function report(r: CompletedRead, { applied, published, written }: { applied: AppliedRead; published: TrackedLease[]; written: WrittenEvent[] | undefined }) {
    options.onRead?.({ source: source.name, full: r.kind === 'full', ok: true, leases: known.size, changed: applied.dirty.length, events: applied.events.length, durationMs: clock.mono() - r.startedMono });
    if (!written) return;
    // Tell the live stream what changed.
    const nowWall = clock.wall();
    for (const lease of published) publish({ type: 'lease', lease: leaseView(lease, nowWall) });
    const ids = new Map(written.map((w) => [`${w.leaseId}#${w.seq}`, w.id]));
    for (const { lease, seq, change } of applied.events) {
      const id = ids.get(`${lease.id}#${seq}`);
      if (id) publish({ type: 'event', event: eventView(id, lease.id, change) });
    }
  }

  async function write(batch: WriteBatch) {
    for (const event of batch.events) metrics.inc('leasehold_events_total', { source: source.name, type: event.change.type });
    for (const event of batch.sourceEvents) metrics.inc('leasehold_events_total', { source: source.name, type: event.type });
    const outcome = await retrying(() => writeBatchSalvaging(store, batch), storeRetry(`writing ${source.name} to the store`));
    if (!outcome) return undefined;
    const { refused } = outcome;
    if (refused.length) {
      metrics.inc('leasehold_store_refused_leases_total', { source: source.name }, refused.length);
      log(`${source.name}: the store refused ${refused.length} lease${refused.length === 1 ? '' : 's'} (${refused[0]!.leaseId}: ${refused[0]!.reason})`);
    }
    const row = health.refusals(batch.dirty, refused);
    if (row) void enqueue(emptyBatch(options, row));
    // Told after the store has it (as leases and events are): a reader that hears it and reads
    // the store sees the source's leases marked. Every write of the source's row is told (a
    // change of status, and its "last good read" about once a second), so that pages show how
    // long ago the source was read, live, without asking.
    if (batch.source) publish({ type: 'source', source: health.view(batch.source) });
    return outcome.written;
  }

  /** Leases the store refused are offered again (as they are now) now and then: what refused them may have been fixed. */
  function retryRefused() {
    const ids = health.refusedDue();
    if (!ids) return;
    const batch = emptyBatch(options, null);
    batch.dirty = ids.map((id) => known.get(id.slice(source.name.length + 1))).filter((lease) => lease !== undefined);
    health.forgetRefused(ids.filter((id) => !known.has(id.slice(source.name.length + 1))));
    if (batch.dirty.length) void enqueue(batch);
  }

  try {
    await Promise.all([lanes.run(signal), renewals.run(signal, () => stopWith !== null, () => flushRenewals())]);
    await flushRenewals(true);
    await Promise.all([changesQueue.idle(), renewalsQueue.idle()]);
    if (stopWith) throw stopWith;
  } finally {
    metrics.clear('leasehold_tracked_leases', labels);
    await watching?.catch(() => {});
  }
}

function countStates(source: string, known: Map<string, TrackedLease>) {
  const counts: Record<string, number> = { held: 0, free: 0, expired: 0, unknown: 0, stale: 0 };
  for (const lease of known.values()) counts[lease.stale ? 'stale' : lease.state]! += 1;
  for (const [state, count] of Object.entries(counts)) metrics.set('leasehold_tracked_leases', { source, state }, count);
}
