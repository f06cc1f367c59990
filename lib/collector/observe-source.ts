// Observing one source: poll it, follow its push stream, turn each read into history with
// lib/domain, write that to the store, and tell the live stream.
//
// Reads of a source never overlap: polls and change hints queue up as "what to read next"
// (everything, or some keys), and one loop reads, applies and writes in order. A failed
// read makes the source down and its leases stale, and nothing else: the next good read is
// compared with the last one as "after a gap", so no expiry, release or failover is invented.
import type { Store } from '../db';
import { applyRead, type ReadContext, type TrackedLease } from '../domain/observe';
import { minuteOf, rollupRenewals, type RenewalPoint } from '../domain/renewal-stats';
import { eventView, leaseView } from '../domain/views';
import { linkedTimeout } from '../lease/deadline';
import { SourceUnavailableError } from '../sources/errors';
import type { LeaseSource, SourceStatusDetail } from '../sources/types';
import { publish } from './bus';
import { metrics } from './metrics';
import { StaleOwnerError, loadSource, writeBatch, type WriteBatch } from './store-writer';

export type ObserveOptions = {
  store: Store;
  source: LeaseSource;
  collectorId: string;
  /** Fencing token of this collector's ownership of the source (0 when nobody else can write). */
  token: bigint;
  ringSize: number;
  log: (line: string) => void;
};

const now = () => performance.now();

/** Resolves after `ms`, when the signal aborts, or when `onWake` is called, leaving no listener behind. */
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

  // 1. Start from what the store knows. Whatever happened since it was written, we did not see.
  const loaded = await retrying('loading the source from the store', () => loadSource(store, source.name, now(), Date.now()), signal, log);
  if (!loaded) return;
  const known = new Map<string, TrackedLease>(loaded.leases.map((lease) => [lease.key, lease]));
  let sourceSeq = loaded.lastSourceSeq;
  let up: boolean | null = loaded.status === 'down' ? false : null;
  let afterGap = known.size > 0;
  let lastGoodReadAt: number | null = null;
  let lastStatus: SourceStatusDetail | null = null;
  const minutes = new Map<string, Map<number, RenewalPoint[]>>();

  // 2. What to read next: everything (poll due, or a hint said so) and/or some keys.
  const pending = { full: true, gap: false, keys: new Set<string>() };
  let wake: (() => void) | null = null;
  const poke = () => {
    wake?.();
    wake = null;
  };
  const watching = source.watch?.(
    (hint) => {
      if (hint.full) pending.full = true;
      if (hint.gap) {
        pending.gap = true;
        log(`${source.name}: ${hint.reason ?? 'events may have been missed'}; reading everything again`);
      }
      for (const key of hint.keys ?? []) pending.keys.add(key);
      poke();
    },
    signal,
  );
  let nextFullAt = now();

  try {
    while (!signal.aborted) {
      // 3. Wait for work: a hint, or the next poll.
      const untilPoll = nextFullAt - now();
      if (!pending.full && pending.keys.size === 0 && untilPoll > 0) {
        await pause(untilPoll, signal, (done) => (wake = done));
        wake = null;
        if (signal.aborted) break;
      }
      const full = pending.full || now() >= nextFullAt || !source.readKeys;
      const keys = [...pending.keys];
      const gap = pending.gap;
      pending.full = false;
      pending.gap = false;
      pending.keys.clear();
      if (full) nextFullAt = now() + source.pollMs;

      // 4. Read.
      const startedMono = now();
      const startedWall = Date.now();
      let observations;
      let covered: string[] | undefined;
      const deadline = linkedTimeout(signal, Math.max(10_000, source.pollMs * 5));
      try {
        if (full) {
          const snapshot = await source.snapshot(deadline.signal);
          observations = snapshot.observations;
          lastStatus = snapshot.status;
        } else {
          ({ observations, covered } = await source.readKeys!(keys, deadline.signal));
        }
      } catch (error) {
        deadline.dispose();
        if (signal.aborted) break;
        const reason = error instanceof SourceUnavailableError ? error.reason : String((error as Error)?.message ?? error);
        metrics.inc('leasehold_read_failures_total', labels);
        metrics.set('leasehold_source_up', labels, 0);
        // 5a. Down: say so once, mark the leases stale, claim nothing else.
        const batch = emptyBatch(options, {
          name: source.name,
          backend: source.backend,
          status: 'down',
          lastGoodReadAt,
          lastError: reason,
          lastPollMs: Math.round(now() - startedMono),
          pollMs: source.pollMs,
          detail: null,
        });
        if (up !== false) {
          log(`${source.name}: down: ${reason}`);
          batch.sourceEvents.push({ seq: ++sourceSeq, type: 'source_down', atWall: startedWall, detail: { error: reason } });
          batch.setStale = true;
          for (const lease of known.values()) lease.stale = true;
        }
        up = false;
        afterGap = true;
        await write(batch);
        pending.full = true;
        nextFullAt = now() + Math.min(source.pollMs, 1_000);
        continue;
      }
      deadline.dispose();

      // 5b. Up: compare with what we knew, on our own clock.
      const read: ReadContext = {
        source: source.name,
        backend: source.backend,
        startedMono,
        startedWall,
        finishedMono: now(),
        afterGap: afterGap || gap,
      };
      const applied = applyRead(known, observations, read, full ? undefined : covered);
      const elapsedMs = Math.round(now() - startedMono);
      if (full) {
        afterGap = false;
        lastGoodReadAt = startedWall;
      }
      const batch = emptyBatch(options, {
        name: source.name,
        backend: source.backend,
        status: 'up',
        lastGoodReadAt: full ? startedWall : null,
        lastError: null,
        lastPollMs: full ? elapsedMs : null,
        pollMs: source.pollMs,
        detail: full ? lastStatus : null,
      });
      if (up === false) {
        log(`${source.name}: up again`);
        batch.sourceEvents.push({ seq: ++sourceSeq, type: 'source_up', atWall: startedWall, detail: null });
        batch.setStale = false;
      }
      up = true;
      batch.dirty = applied.dirty;
      batch.events = applied.events;
      batch.renewals = applied.renewals;
      batch.rollups = rollupsFor(minutes, applied.renewals);
      const written = await write(batch);
      metrics.set('leasehold_source_up', labels, 1);
      metrics.observe('leasehold_poll_duration_seconds', labels, (now() - startedMono) / 1000);
      if (applied.renewals.length) metrics.inc('leasehold_renewals_total', labels, applied.renewals.length);
      countStates(source.name, known);

      // 6. Tell the live stream what changed.
      const nowWall = Date.now();
      for (const lease of applied.dirty) publish({ type: 'lease', lease: leaseView(lease, nowWall) });
      const ids = new Map((written ?? []).map((w) => [`${w.leaseId}#${w.seq}`, w.id]));
      for (const { lease, seq, change } of applied.events) {
        const id = ids.get(`${lease.id}#${seq}`);
        if (id) publish({ type: 'event', event: eventView(id, lease.id, change) });
      }
    }
  } finally {
    metrics.clear('leasehold_tracked_leases', labels);
    await watching?.catch(() => {});
  }

  async function write(batch: WriteBatch) {
    for (const event of batch.events) metrics.inc('leasehold_events_total', { source: source.name, type: event.change.type });
    for (const event of batch.sourceEvents) metrics.inc('leasehold_events_total', { source: source.name, type: event.type });
    if (batch.sourceEvents.length) {
      publish({
        type: 'source',
        source: {
          name: source.name,
          backend: source.backend,
          status: batch.source.status,
          lastGoodReadAt: lastGoodReadAt === null ? null : new Date(lastGoodReadAt).toISOString(),
          lastError: batch.source.lastError,
          lastPollMs: batch.source.lastPollMs,
        },
      });
    }
    return retrying(`writing ${source.name} to the store`, () => writeBatch(store, batch), signal, log);
  }
}

function emptyBatch(options: ObserveOptions, source: WriteBatch['source']): WriteBatch {
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

/** Adds the renewals to their minutes and returns the rollups of every minute they touched. */
function rollupsFor(minutes: Map<string, Map<number, RenewalPoint[]>>, renewals: WriteBatch['renewals']): WriteBatch['rollups'] {
  const touched = new Set<string>();
  for (const { lease, renewal } of renewals) {
    const minute = minuteOf(renewal.atWall);
    let perLease = minutes.get(lease.id);
    if (!perLease) minutes.set(lease.id, (perLease = new Map()));
    perLease.set(minute, [...(perLease.get(minute) ?? []), { intervalMs: renewal.intervalMs, marginMs: renewal.marginMs }]);
    touched.add(`${lease.id}\u0000${minute}`);
  }
  const rollups: WriteBatch['rollups'] = [];
  for (const entry of touched) {
    const [leaseId, minute] = entry.split('\u0000') as [string, string];
    const stats = rollupRenewals(minutes.get(leaseId)!.get(Number(minute))!);
    if (stats) rollups.push({ leaseId, minute: Number(minute), stats });
  }
  // Keep only the current and the previous minute in memory; older ones are final in the store.
  const oldest = minuteOf(Date.now()) - 60_000;
  for (const perLease of minutes.values()) for (const minute of perLease.keys()) if (minute < oldest) perLease.delete(minute);
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
