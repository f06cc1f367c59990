// Observing one source: poll it, follow its push stream, turn each read into history with
// lib/domain, write that to the store, and tell the live stream.
//
// Two lanes of reads: full reads every poll interval, and targeted reads of what a change
// hint named, so a pushed change need not wait behind a slow full read. Each read is applied
// the moment it completes (synchronously), and a lease is only ever moved forward by a read
// that started after the one it last came from; writes go to the store in the order reads
// were applied. A failed full read makes the source down and its leases stale, and nothing
// else: the next good read is compared with the last one as "after a gap", so no expiry,
// release or failover is invented.
//
// A failing source costs next to nothing: every read has a deadline that does not depend on
// the adapter honouring its signal (readDeadlineMs), the next attempt waits a backoff with
// jitter (up to MAX_BACKOFF_MS), and the store is written when the source's status changes,
// not at every failed attempt.
import { ExponentialBackoff, type IBackoff } from 'cockatiel';
import type { Store } from '../db';
import { applyRead } from '../domain/apply-read';
import type { Observation, ReadContext, TrackedLease } from '../domain/observe';
import { minuteOf, rollupRenewals, type RenewalPoint } from '../domain/renewal-stats';
import { eventView, leaseView } from '../domain/views';
import { linkedTimeout } from '../lease/deadline';
import { SourceUnavailableError } from '../sources/errors';
import type { LeaseSource, PollResult, UnreadScope } from '../sources/types';
import { publish } from '../live/bus';
import { metrics } from '../metrics';
import { StaleOwnerError, loadSource, writeBatchSalvaging, type RefusedLease, type SourceRow, type WriteBatch, type WrittenEvent } from './store-writer';

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
};

export type ReadReport = { source: string; full: boolean; ok: boolean; leases: number; changed: number; events: number; durationMs: number };

const now = () => performance.now();
const HINT_COALESCE_MS = 5;
const RENEWAL_FLUSH_MS = 1_000;
/** A failing source is tried again after a backoff growing from its poll interval to this, with jitter. */
export const MAX_BACKOFF_MS = 10_000;
/** How often leases the store refused are offered to it again. */
const REFUSED_RETRY_MS = 10_000;
/** A down source's row is written when its status changes, and its error text at most this often. */
const DOWN_REWRITE_MS = 60_000;

/**
 * How long one read may take before the source counts as down: twice the poll interval,
 * at least 5 s, at most 30 s. A source whose calls hang is down within this of the read that
 * hung (docs/configuring-sources.md says so).
 */
export function readDeadlineMs(pollMs: number): number {
  return Math.min(30_000, Math.max(5_000, 2 * pollMs));
}

/** The longest a full read may be given: a source this slow to read is down, whatever its size. */
export const MAX_FULL_READ_DEADLINE_MS = 60_000;

/**
 * The deadline of the next full read: readDeadlineMs, or three times the last good full read
 * when that is longer (a source of 100,000 keys takes seconds to read, and is not down for
 * it); after a read that ran out of time, twice the deadline it ran out of, so that a source
 * that is slow but answers is read in the end. At most MAX_FULL_READ_DEADLINE_MS.
 */
export function nextFullReadDeadlineMs(baseMs: number, last: { ok: true; durationMs: number } | { ok: false; timedOutAfterMs: number } | null): number {
  if (last === null) return baseMs;
  const wanted = last.ok ? 3 * last.durationMs : 2 * last.timedOutAfterMs;
  return Math.min(MAX_FULL_READ_DEADLINE_MS, Math.max(baseMs, Math.round(wanted)));
}

/**
 * Settles with `work`, or rejects as soon as `signal` aborts, whether or not the adapter
 * listens to it: a read stuck in a driver cannot hold the observer.
 */
function unlessAborted<T>(work: Promise<T>, signal: AbortSignal, reason: () => Error): Promise<T> {
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

/** Resolves after `ms`, when the signal aborts, or when the registered wake function is called, leaving no listener behind. */
function pause(ms: number, signal: AbortSignal, register?: (wake: () => void) => void): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    register?.(done);
  });
}

/** Observes until `signal` aborts. Throws StaleOwnerError when another collector has taken the source over. */
export async function observeSource(options: ObserveOptions, signal: AbortSignal): Promise<void> {
  const { store, source, log } = options;
  const labels = { source: source.name };
  // Exported from the start at 0: a rate() over a series that appears with its first failure
  // misses that failure, and a dashboard cannot tell "none yet" from "not collected".
  metrics.inc('leasehold_read_failures_total', labels, 0);
  const readTimeoutMs = readDeadlineMs(source.pollMs);
  /** A read that ran out of time, in words. */
  const tooSlowAfter = (ms: number) => () => new SourceUnavailableError(source.name, `no answer within ${Math.round(ms / 100) / 10} s`);
  const tooSlow = tooSlowAfter(readTimeoutMs);

  // 1. Start from what the store knows. Whatever happened since it was written, we did not see.
  const loaded = await retrying('loading the source from the store', () => loadSource(store, source.name, now(), Date.now()), signal, log);
  if (!loaded) return;
  const known = new Map<string, TrackedLease>(loaded.leases.map((lease) => [lease.key, lease]));
  let sourceSeq = loaded.lastSourceSeq;
  let up: boolean | null = loaded.status === 'down' ? false : null;
  let afterGap = known.size > 0;
  let lastGoodReadAt: number | null = null;
  let writtenGoodReadAt = -Infinity;
  // When the read that found the source down began (null while up, or down since before this process).
  let downSince: number | null = null;
  // What the last full read could not read of the source (a table), for its row's lastError.
  let lastPartly: string | null = null;
  // The reason written for the source being down, and when: it is written again only when it
  // changed, and then at most once a minute.
  let downReason: string | null = null;
  let downWrittenAt = -Infinity;
  // Leases the store refused to take as they were (see noteRefusals), and why.
  const refusedLeases = new Map<string, string>();
  let lastRefusedRetry = -Infinity;
  const storeProblem = () => {
    const [first] = refusedLeases;
    if (!first) return null;
    return `the store refused ${refusedLeases.size} lease${refusedLeases.size === 1 ? '' : 's'} of this source (${first[0]}: ${first[1]})`;
  };
  /** The lastError of a source that answers: the parts it could not read, the leases the store refused. */
  const upError = (partly: string | null) => [partly, storeProblem()].filter(Boolean).join('; ') || null;
  const minutes = new Map<string, Map<number, RenewalPoint[]>>();
  const sourceRow = (status: 'up' | 'down', lastError: string | null, lastPollMs: number | null): SourceRow => ({
    name: source.name,
    backend: source.backend,
    status,
    lastGoodReadAt,
    lastError,
    lastPollMs,
    pollMs: source.pollMs,
    detail: null,
  });

  // Two ordered write queues: state changes (what people wait for), and renewals (many,
  // batched). Each writes in the order it was given, and batches that queue up behind a write
  // in progress go together in the next transaction. Across the two queues a lease row carries
  // its version, so an older picture never replaces a newer one.
  let stopWith: unknown = null;
  const queue = () => {
    let writing: Promise<void> | null = null;
    let queued: { batch: WriteBatch; waiters: ((written: WrittenEvent[] | undefined) => void)[] } | null = null;
    const drain = async () => {
      while (queued) {
        const { batch, waiters } = queued;
        queued = null;
        let written: WrittenEvent[] | undefined;
        try {
          written = await write(batch);
        } catch (error) {
          stopWith ??= error; // a StaleOwnerError stops the whole observer
        }
        for (const resolve of waiters) resolve(written);
      }
      writing = null;
    };
    return {
      enqueue: (batch: WriteBatch): Promise<WrittenEvent[] | undefined> =>
        new Promise((resolve) => {
          if (queued) {
            queued.batch = mergeBatches(queued.batch, batch);
            queued.waiters.push(resolve);
          } else {
            queued = { batch, waiters: [resolve] };
          }
          writing ??= drain();
        }),
      idle: () => writing ?? Promise.resolve(),
    };
  };
  const changesQueue = queue();
  const renewalsQueue = queue();
  // The last state-change write queued: renewals wait for it, so a lease's first row and
  // events are in the store before its renewal samples (which refer to it) are written.
  let changesWritten: Promise<unknown> = Promise.resolve();
  const enqueue = (batch: WriteBatch) => (changesWritten = changesQueue.enqueue(batch));

  // Renewals are many (a lease renewing every 10 s is 6 a minute) and nobody waits for them:
  // their rows, raw samples and rollups are written in one batch a second (DESIGN.md section 4).
  const renewalsDue: { leases: Map<string, TrackedLease>; renewals: WriteBatch['renewals'] } = { leases: new Map(), renewals: [] };
  const flushRenewals = async (closing = false) => {
    if (renewalsDue.renewals.length === 0 && renewalsDue.leases.size === 0 && minutes.size === 0) return;
    const leases = [...renewalsDue.leases.values()];
    const renewals = renewalsDue.renewals.splice(0);
    renewalsDue.leases.clear();
    // The source's row is the other queue's to write.
    const batch = emptyBatch(options, null);
    batch.dirty = leases;
    batch.renewals = renewals;
    batch.rollups = rollupsFor(minutes, renewals, closing);
    await changesWritten;
    const written = await renewalsQueue.enqueue(batch);
    if (written) {
      const nowWall = Date.now();
      for (const lease of leases) publish({ type: 'lease', lease: leaseView(lease, nowWall) });
    }
  };

  // 2. What to read next: everything (poll due, hint, after a failure) and some keys.
  const pending = { full: true, gap: false, keys: new Set<string>() };
  const wakers = { full: null as (() => void) | null, keys: null as (() => void) | null };
  const wake = (lane: 'full' | 'keys') => {
    wakers[lane]?.();
    wakers[lane] = null;
  };
  const watching = source.watch?.(
    (hint) => {
      if (hint.gap) {
        pending.gap = true;
        log(`${source.name}: ${hint.reason ?? 'events may have been missed'}; reading everything again`);
      }
      if (hint.full) {
        pending.full = true;
        wake('full');
      }
      if (hint.keys?.length) {
        for (const key of hint.keys) pending.keys.add(key);
        wake('keys');
      }
    },
    signal,
  );

  /** Applies a completed read and queues its write; returns once it is written. */
  async function applyAndWrite(
    full: boolean,
    observations: Observation[],
    covered: string[] | undefined,
    startedMono: number,
    startedWall: number,
    gap: boolean,
    detail: Record<string, unknown> | null,
    /** A poll that proved the source answers (it counts as a good read, without reading everything). */
    liveness = false,
    /** Parts of a full read that could not be read: their leases are not gone, only not seen. */
    unread: UnreadScope[] = [],
  ) {
    const read: ReadContext = { source: source.name, backend: source.backend, startedMono, startedWall, finishedMono: now(), afterGap: afterGap || gap };
    // A lease already moved forward by a read that started later (the other lane) keeps
    // that newer picture: this read is older news about it.
    const isNewer = (key: string) => (known.get(key)?.observedAtMono ?? -Infinity) > startedMono;
    const unseen = (key: string) => unread.some((part) => key.startsWith(part.prefix));
    // Leases of an unread part are marked stale, and compared across a gap when seen again.
    const hidden: TrackedLease[] = [];
    for (const lease of known.values()) {
      if (lease.stale || !unseen(lease.key)) continue;
      lease.stale = true;
      lease.version += 1;
      hidden.push(lease);
    }
    const scope = full ? [...known.keys()].filter((key) => !unseen(key)) : (covered ?? []);
    const stale = new Set(scope.filter(isNewer));
    for (const o of observations) if (isNewer(o.key)) stale.add(o.key);
    const applied = applyRead(
      known,
      stale.size ? observations.filter((o) => !stale.has(o.key)) : observations,
      read,
      stale.size ? scope.filter((key) => !stale.has(key)) : scope,
    );
    if (full) afterGap = false;
    if (full || liveness) lastGoodReadAt = startedWall;
    const partly = unread.length ? unread.map((part) => part.reason).join('; ') : null;
    const batch = emptyBatch(options, {
      ...sourceRow('up', upError(full ? partly : lastPartly), full ? Math.round(now() - startedMono) : null),
      lastGoodReadAt: full || liveness ? startedWall : null,
      detail,
    });
    if (full) lastPartly = partly;
    if (up === false) {
      log(`${source.name}: up again`);
      // Stamped when the read that proved it came back, not when that read began.
      batch.sourceEvents.push({ seq: ++sourceSeq, type: 'source_up', atWall: Date.now(), detail: null });
      batch.setStale = false;
      downReason = null;
    }
    downSince = null;
    up = true;
    // State changes go now; renewals join the next one-second batch.
    batch.dirty = [...hidden, ...applied.dirty.filter((lease) => !applied.renewedOnly.has(lease))];
    batch.events = applied.events;
    for (const lease of applied.renewedOnly) renewalsDue.leases.set(lease.id, lease);
    for (const lease of batch.dirty) renewalsDue.leases.delete(lease.id);
    renewalsDue.renewals.push(...applied.renewals);
    if (applied.renewals.length) metrics.inc('leasehold_renewals_total', labels, applied.renewals.length);
    // A keys-lane read that only saw renewals need not touch the store now.
    // A read that changed nothing writes nothing, except that a poll refreshes the source's
    // "last good read" once a second.
    const refresh = liveness && startedWall - writtenGoodReadAt >= 1_000;
    const idle = !full && !refresh && batch.dirty.length === 0 && batch.events.length === 0 && batch.sourceEvents.length === 0;
    if (batch.setStale === false && unread.length) batch.setStale = undefined; // some leases stay stale: marked one by one above
    if (full || refresh) writtenGoodReadAt = startedWall;
    return { applied, written: idle ? [] : await enqueue(batch), published: batch.dirty };
  }

  async function fullLane() {
    let nextFullAt = now();
    // While the source fails: how long until the next attempt (null while it answers).
    let backoff: IBackoff<unknown> | null = null;
    let fullDeadlineMs = readTimeoutMs;
    while (!signal.aborted && stopWith === null) {
      const untilPoll = nextFullAt - now();
      // A hint asks for a read now, unless the source is failing: then its backoff holds.
      if (untilPoll > 0 && (!pending.full || backoff !== null)) {
        await pause(untilPoll, signal, (done) => (wakers.full = done));
        if (signal.aborted) return;
        continue;
      }
      const gap = pending.gap;
      const askedFull = pending.full;
      pending.full = false;
      pending.gap = false;
      nextFullAt = now() + source.pollMs;
      const startedMono = now();
      const startedWall = Date.now();
      const deadline = linkedTimeout(signal, fullDeadlineMs);
      let result: PollResult;
      try {
        // After a gap, or when a hint asked for everything, a full snapshot; otherwise what
        // the source says a poll needs (only a liveness check while its push stream is live).
        const reading =
          askedFull || afterGap || gap || backoff !== null || !source.poll
            ? source.snapshot(deadline.signal).then((snapshot): PollResult => ({ kind: 'full', ...snapshot }))
            : source.poll(deadline.signal);
        result = await unlessAborted(reading, deadline.signal, tooSlowAfter(fullDeadlineMs));
      } catch (error) {
        if (signal.aborted) return;
        if (deadline.signal.aborted) fullDeadlineMs = nextFullReadDeadlineMs(readTimeoutMs, { ok: false, timedOutAfterMs: fullDeadlineMs });
        await sourceDown(error, startedMono, startedWall);
        backoff = backoff ? backoff.next(undefined) : new ExponentialBackoff({ initialDelay: source.pollMs, maxDelay: Math.max(source.pollMs, MAX_BACKOFF_MS) }).next();
        // Cockatiel's decorrelated jitter may draw less than its initial delay: never sooner
        // than the next poll would have been.
        nextFullAt = now() + Math.max(source.pollMs, backoff.duration);
        pending.full = true;
        continue;
      } finally {
        deadline.dispose();
      }
      backoff = null;
      // The status of the backend itself comes with full reads only.
      const full = result.kind === 'full';
      if (full) fullDeadlineMs = nextFullReadDeadlineMs(readTimeoutMs, { ok: true, durationMs: now() - startedMono });
      const { applied, written, published } =
        result.kind === 'full'
          ? await applyAndWrite(true, result.observations, undefined, startedMono, startedWall, gap, result.status, false, result.unread)
          : await applyAndWrite(false, result.observations, result.covered, startedMono, startedWall, false, result.status ?? null, true);
      retryRefused();
      metrics.set('leasehold_source_up', labels, 1);
      if (full) metrics.observe('leasehold_poll_duration_seconds', labels, (now() - startedMono) / 1000);
      countStates(source.name, known);
      report(full, applied, published, written, startedMono);
    }
  }

  async function keysLane() {
    if (!source.readKeys) return;
    while (!signal.aborted && stopWith === null) {
      if (pending.keys.size === 0) {
        await pause(60_000, signal, (done) => (wakers.keys = done));
        if (signal.aborted) return;
        if (pending.keys.size === 0) continue;
      }
      // Let a burst of hints arrive (a few ms), then read them together; everything hinted
      // while this read runs is coalesced into the next one.
      await pause(HINT_COALESCE_MS, signal);
      const keys = [...pending.keys];
      pending.keys.clear();
      const startedMono = now();
      const startedWall = Date.now();
      const deadline = linkedTimeout(signal, readTimeoutMs);
      let result;
      try {
        result = await unlessAborted(source.readKeys(keys, deadline.signal), deadline.signal, tooSlow);
      } catch {
        // A targeted read that fails proves little on its own: ask for a full read now,
        // which will say whether the source is down (a source already down keeps its backoff).
        pending.full = true;
        if (up !== false) wake('full');
        continue;
      } finally {
        deadline.dispose();
      }
      if (up === false) continue; // the full lane decides when the source is back
      const { applied, written, published } = await applyAndWrite(false, result.observations, result.covered, startedMono, startedWall, false, null);
      report(false, applied, published, written, startedMono);
    }
  }

  async function sourceDown(error: unknown, startedMono: number, startedWall: number) {
    const reason = error instanceof SourceUnavailableError ? error.reason : String((error as Error)?.message ?? error);
    metrics.inc('leasehold_read_failures_total', labels);
    metrics.set('leasehold_source_up', labels, 0);
    const report = () =>
      options.onRead?.({ source: source.name, full: true, ok: false, leases: known.size, changed: 0, events: 0, durationMs: now() - startedMono });
    // Down: say so once, mark the leases stale, claim nothing else. A source that stays down
    // is not written again, but for a new reason (at most once a minute).
    const changed = up !== false;
    if (!changed && (reason === downReason || now() - downWrittenAt < DOWN_REWRITE_MS)) {
      report();
      return;
    }
    const batch = emptyBatch(options, sourceRow('down', reason, Math.round(now() - startedMono)));
    if (changed) {
      log(`${source.name}: down: ${reason}`);
      batch.sourceEvents.push({ seq: ++sourceSeq, type: 'source_down', atWall: startedWall, detail: { error: reason } });
      batch.setStale = true;
      for (const lease of known.values()) lease.stale = true;
      downSince = startedWall;
    }
    up = false;
    afterGap = true;
    downReason = reason;
    downWrittenAt = now();
    await enqueue(batch);
    report();
  }

  function report(full: boolean, applied: ReturnType<typeof applyRead>, published: TrackedLease[], written: WrittenEvent[] | undefined, startedMono: number) {
    options.onRead?.({
      source: source.name,
      full,
      ok: true,
      leases: known.size,
      changed: applied.dirty.length,
      events: applied.events.length,
      durationMs: now() - startedMono,
    });
    if (!written) return;
    // Tell the live stream what changed.
    const nowWall = Date.now();
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
    const outcome = await retrying(`writing ${source.name} to the store`, () => writeBatchSalvaging(store, batch), signal, log);
    const written = outcome?.written;
    if (outcome) noteRefusals(batch, outcome.refused);
    // Told after the store has it (as leases and events are): a reader that hears it and reads
    // the store sees the source's leases marked. Every write of the source's row is told (a
    // change of status, and its "last good read" about once a second), so that pages show how
    // long ago the source was read, live, without asking.
    if (written !== undefined && batch.source) {
      publish({
        type: 'source',
        source: {
          name: source.name,
          backend: source.backend,
          status: batch.source.status,
          lastGoodReadAt: lastGoodReadAt === null ? null : new Date(lastGoodReadAt).toISOString(),
          lastError: batch.source.lastError,
          lastPollMs: batch.source.lastPollMs,
          ...(batch.source.status === 'up' ? { downSince: null } : downSince !== null ? { downSince: new Date(downSince).toISOString() } : {}),
        },
      });
    }
    return written;
  }

  /**
   * Leases the store refused are remembered until a later write of them succeeds, and named
   * in the source's lastError meanwhile: the source is readable, but not all of it is shown
   * as it is. The source's row is written again when that changes.
   */
  function noteRefusals(batch: WriteBatch, refused: RefusedLease[]) {
    const before = storeProblem();
    for (const lease of batch.dirty) refusedLeases.delete(lease.id);
    for (const { leaseId, reason } of refused) refusedLeases.set(leaseId, reason);
    if (refused.length) {
      metrics.inc('leasehold_store_refused_leases_total', { source: source.name }, refused.length);
      log(`${source.name}: the store refused ${refused.length} lease${refused.length === 1 ? '' : 's'} (${refused[0]!.leaseId}: ${refused[0]!.reason})`);
    }
    if (storeProblem() !== before && up === true) void enqueue(emptyBatch(options, sourceRow('up', upError(lastPartly), null)));
  }

  /** Leases the store refused are offered again (as they are now) every REFUSED_RETRY_MS: what refused them may have been fixed. */
  function retryRefused() {
    if (refusedLeases.size === 0 || now() - lastRefusedRetry < REFUSED_RETRY_MS) return;
    lastRefusedRetry = now();
    const batch = emptyBatch(options, null);
    batch.dirty = [...refusedLeases.keys()].map((id) => known.get(id.slice(source.name.length + 1))).filter((lease) => lease !== undefined);
    for (const id of refusedLeases.keys()) if (!known.has(id.slice(source.name.length + 1))) refusedLeases.delete(id);
    if (batch.dirty.length) void enqueue(batch);
  }

  async function renewalLane() {
    while (!signal.aborted && stopWith === null) {
      await pause(RENEWAL_FLUSH_MS, signal);
      await flushRenewals();
    }
  }

  try {
    await Promise.all([fullLane(), keysLane(), renewalLane()]);
    await flushRenewals(true);
    await Promise.all([changesQueue.idle(), renewalsQueue.idle()]);
    if (stopWith) throw stopWith;
  } finally {
    metrics.clear('leasehold_tracked_leases', labels);
    await watching?.catch(() => {});
  }
}

/** One batch doing what `a` then `b` would: later rows win, events and renewals add up. */
function mergeBatches(a: WriteBatch, b: WriteBatch): WriteBatch {
  const dirty = new Map(a.dirty.map((lease) => [lease.id, lease]));
  for (const lease of b.dirty) dirty.set(lease.id, lease);
  const rollups = new Map(a.rollups.map((r) => [`${r.leaseId}\u0000${r.minute}`, r]));
  for (const r of b.rollups) rollups.set(`${r.leaseId}\u0000${r.minute}`, r);
  return {
    source:
      a.source && b.source
        ? {
            ...b.source,
            lastGoodReadAt: b.source.lastGoodReadAt ?? a.source.lastGoodReadAt,
            lastPollMs: b.source.lastPollMs ?? a.source.lastPollMs,
            detail: b.source.detail ?? a.source.detail,
          }
        : (b.source ?? a.source),
    collector: b.collector,
    dirty: [...dirty.values()],
    events: [...a.events, ...b.events],
    sourceEvents: [...a.sourceEvents, ...b.sourceEvents],
    renewals: [...a.renewals, ...b.renewals],
    rollups: [...rollups.values()],
    setStale: b.setStale ?? a.setStale,
    ringSize: b.ringSize,
  };
}

function emptyBatch(options: ObserveOptions, source: WriteBatch['source']): WriteBatch {
  // (source null: a batch that adds to leases and leaves the source's row alone)
  return {
    source,
    collector: { id: options.collectorId, token: options.token },
    dirty: [],
    events: [],
    sourceEvents: [],
    renewals: [],
    rollups: [],
    ringSize: options.ringSize,
  };
}

/**
 * Adds the renewals to their minutes, and returns the rollups of the minutes that are over
 * (once each), or of every minute still held when `closing` (the observer is stopping).
 * A minute is written when it is complete, not at every renewal in it.
 */
function rollupsFor(minutes: Map<string, Map<number, RenewalPoint[]>>, renewals: WriteBatch['renewals'], closing = false): WriteBatch['rollups'] {
  for (const { lease, renewal } of renewals) {
    const minute = minuteOf(renewal.atWall);
    let perLease = minutes.get(lease.id);
    if (!perLease) minutes.set(lease.id, (perLease = new Map()));
    let points = perLease.get(minute);
    if (!points) perLease.set(minute, (points = []));
    points.push({ intervalMs: renewal.intervalMs, marginMs: renewal.marginMs });
  }
  // Renewals are estimated to have happened up to a poll before they are seen: a minute is
  // complete a little after it ends.
  const current = minuteOf(Date.now() - 5_000);
  const rollups: WriteBatch['rollups'] = [];
  for (const [leaseId, perLease] of minutes) {
    for (const [minute, points] of perLease) {
      if (minute >= current && !closing) continue;
      const stats = rollupRenewals(points);
      if (stats) rollups.push({ leaseId, minute, stats });
      perLease.delete(minute);
    }
    if (perLease.size === 0) minutes.delete(leaseId);
  }
  return rollups;
}

function countStates(source: string, known: Map<string, TrackedLease>) {
  const counts: Record<string, number> = { held: 0, free: 0, expired: 0, unknown: 0, stale: 0 };
  for (const lease of known.values()) counts[lease.stale ? 'stale' : lease.state]! += 1;
  for (const [state, count] of Object.entries(counts)) metrics.set('leasehold_tracked_leases', { source, state }, count);
}

/** Retries `work` with backoff until it succeeds or the signal aborts (undefined then). StaleOwnerError is not retried. */
async function retrying<T>(what: string, work: () => Promise<T>, signal: AbortSignal, log: (line: string) => void): Promise<T | undefined> {
  let delay = 200;
  for (;;) {
    try {
      return await work();
    } catch (error) {
      if (error instanceof StaleOwnerError) throw error;
      if (signal.aborted) return undefined;
      metrics.inc('leasehold_store_write_failures_total', {});
      log(`${what} failed (${(error as Error)?.message ?? error}); retrying in ${delay} ms`);
      await pause(delay, signal);
      if (signal.aborted) return undefined;
      delay = Math.min(delay * 2, 5_000);
    }
  }
}
