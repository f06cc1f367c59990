// An ordered write queue for one source's store writes. Each queue writes in the order it was
// given; batches that queue up behind a write in progress go together in the next
// transaction (mergeBatches), up to MERGE_LIMIT rows. The observer keeps two: state changes (what people wait for)
// and renewals (many, batched). Across the two a lease row carries its version, so an older
// picture never replaces a newer one.
import type { WriteBatch, WrittenEvent } from '../db/observer-writes';

export type WriteQueue = {
  /** Resolves once the batch (or the merged batch it joined) is written: its events, or undefined when the write failed. */
  enqueue(batch: WriteBatch): Promise<WrittenEvent[] | undefined>;
  /** Resolves when nothing is being written. */
  idle(): Promise<void>;
};

/** Batches merge while the merged one stays this small: a larger one is written on its own, so no one write's rows and JSON hold the event loop for long. */
export const MERGE_LIMIT = 4_000;

/** Rows a batch writes (leases, events, renewal samples, rollups). */
export const rowsOf = (batch: WriteBatch) => batch.dirty.length + batch.events.length + batch.renewals.length + batch.rollups.length;

/**
 * `write` may throw: the batch's waiters get undefined, and `onError` the error. `onWaiting`: the rows waiting behind the write in progress, each time that changes.
 * A batch not written (`write` threw, or gave up: undefined) ends the queue: nothing given after it is written (its waiters get undefined), so what
 * the store has of a source is always a prefix of what it was given, never history with a hole (a release lost, the acquisition after it written).
 */
export function createWriteQueue(write: (batch: WriteBatch) => Promise<WrittenEvent[] | undefined>, onError: (error: unknown) => void, onWaiting: (rows: number) => void = () => {}): WriteQueue {
  let writing: Promise<void> | null = null;
  const queued: { batch: WriteBatch; waiters: ((written: WrittenEvent[] | undefined) => void)[] }[] = [];
  let waiting = 0;
  let failed = false;
  const tell = (rows: number) => onWaiting((waiting += rows));
  const drain = async () => {
    for (let next = queued.shift(); next; next = queued.shift()) {
      tell(-rowsOf(next.batch));
      let written: WrittenEvent[] | undefined;
      if (!failed) {
        try {
          written = await write(next.batch);
        } catch (error) {
          onError(error);
        }
        failed = written === undefined;
      }
      for (const resolve of next.waiters) resolve(written);
    }
    writing = null;
  };
  return {
    enqueue: (batch) =>
      new Promise((resolve) => {
        const last = queued.at(-1);
        if (last && rowsOf(last.batch) + rowsOf(batch) <= MERGE_LIMIT) {
          const before = rowsOf(last.batch);
          last.batch = mergeBatches(last.batch, batch);
          last.waiters.push(resolve);
          tell(rowsOf(last.batch) - before);
        } else {
          queued.push({ batch, waiters: [resolve] });
          tell(rowsOf(batch));
        }
        writing ??= drain();
      }),
    idle: () => writing ?? Promise.resolve(),
  };
}

/** One batch doing what `a` then `b` would: later rows win, events and renewals add up. */
export function mergeBatches(a: WriteBatch, b: WriteBatch): WriteBatch {
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
    ...(a.renewedOnly && b.renewedOnly ? { renewedOnly: true } : {}),
    ringSize: b.ringSize,
  };
}

/** Who writes: the collector and its fencing token of the source, and the renewal ring's size. */
export type Writer = { collectorId: string; token: bigint; ringSize: number; source?: { name: string } };

/** A batch that writes nothing yet. `source` null: it adds to leases and leaves the source's row alone. */
export function emptyBatch(writer: Writer, source: WriteBatch['source']): WriteBatch {
  return {
    source,
    collector: { id: writer.collectorId, token: writer.token, ...(writer.source ? { source: writer.source.name } : {}) },
    dirty: [],
    events: [],
    sourceEvents: [],
    renewals: [],
    rollups: [],
    ringSize: writer.ringSize,
  };
}
