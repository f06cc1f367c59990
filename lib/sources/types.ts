// The one contract every backend adapter implements. The collector talks only to this.
import type { Observation } from '../domain/observe';
import type { Backend } from '../domain/types';

/** What a source reports about the backend itself (etcd's Raft status, Redlock instances...). */
export type SourceStatusDetail = Record<string, unknown>;

/** Part of a source that could not be read this time: the keys under `prefix` (a table's). */
export type UnreadScope = { prefix: string; reason: string };

export type SourceSnapshot = {
  /** Every lease the source can see, one per key, except under the unread prefixes. */
  observations: Observation[];
  status: SourceStatusDetail | null;
  /**
   * Parts that could not be read (a table renamed or locked) while the rest could: their
   * leases are neither gone nor changed, only not seen. Absent when everything was read.
   */
  unread?: UnreadScope[];
};

/**
 * A push source says something may have changed. `keys`: re-read these leases. `urgent`: the
 * change may move a holder (a set, a delete, an expiry; not only a renewal), so its keys are
 * read on their own, not in a batch of renewals. `full`: re-read everything. `gap`: events may
 * have been lost (an etcd watch behind a compaction): the next read cannot be diffed as if
 * nothing was missed.
 */
export type ChangeHint = { keys?: string[]; urgent?: boolean; full?: boolean; gap?: boolean; reason?: string };

export type PollResult =
  | ({ kind: 'full' } & SourceSnapshot)
  /**
   * `status`: what the backend says of itself, when the poll read it (etcd's Raft leader).
   * `unchangedUnder`: every known lease under these prefixes that is not covered was read too,
   * and is as it was (a PostgreSQL table's rows not written since the last read): it counts
   * as observed by this read, with nothing to judge.
   */
  | { kind: 'partial'; covered: string[]; observations: Observation[]; status?: SourceStatusDetail; unchangedUnder?: string[] };

/**
 * Called by a read of many round trips as each one answers: the caller's deadline is then of
 * silence, not of the whole read (a large source that keeps answering is not down).
 */
export type Progress = () => void;

/** How often a source whose push stream is live still reads everything, to reconcile (at the least). */
export const RECONCILE_EVERY_MS = 10_000;
/** The longest a slow full read may put the next reconcile off (reconcileDue). */
export const MAX_RECONCILE_EVERY_MS = 120_000;

/** When a source last read everything (its monotonic start) and how long that read took. */
export type FullReadTimes = { lastFullAt: number; lastFullMs: number };

/**
 * Whether a source whose push stream is live should read everything now, to reconcile: every
 * RECONCILE_EVERY_MS or ten polls, whichever is longer, and never more than a tenth of the time.
 * A full read of 100,000 keys that takes 5 s on a busy machine is repeated every 50 s, not
 * every 10 s (back to back, it would be most of what the collector, the backend and the store
 * do), up to MAX_RECONCILE_EVERY_MS. Changes come pushed meanwhile; the reconcile is the net
 * under them.
 */
export function reconcileDue(times: FullReadTimes, nowMono: number, pollMs: number): boolean {
  const everyMs = Math.max(RECONCILE_EVERY_MS, 10 * pollMs, Math.min(MAX_RECONCILE_EVERY_MS, 10 * times.lastFullMs));
  return nowMono - times.lastFullAt >= everyMs;
}

export interface LeaseSource {
  readonly name: string;
  readonly backend: Backend;
  /** How often it should be polled (the push stream, if any, comes on top). */
  readonly pollMs: number;
  /**
   * One read of every lease the source can see (discovery included) and of its status.
   * Fails with SourceUnavailableError when it cannot read; it never returns half a picture
   * as if it were whole. A read of many round trips calls `progress` as each answers.
   */
  snapshot(signal: AbortSignal, progress?: Progress): Promise<SourceSnapshot>;
  /**
   * Re-reads only what a change hint named (hint keys are the adapter's own and opaque to
   * the caller). `covered` lists the lease keys the read speaks for: one of them missing
   * from `observations` no longer exists. Fails with SourceUnavailableError like snapshot().
   */
  readKeys?(keys: string[], signal: AbortSignal): Promise<{ covered: string[]; observations: Observation[] }>;
  /**
   * What one poll should read, when the source can do better than a full snapshot every
   * time: while its push stream is live, changes arrive as hints, so a poll only checks that
   * the backend answers and reads what push cannot show (etcd lease TTLs that are due), and
   * a full snapshot reconciles now and then. Fails with SourceUnavailableError like snapshot().
   * Absent: every poll is a snapshot. `progress` as for snapshot().
   */
  poll?(signal: AbortSignal, progress?: Progress): Promise<PollResult>;
  /**
   * Pushes change hints until `signal` aborts; resolves then. Absent, or resolving early,
   * means polling only. Never throws: losing the stream only delays what polling will see.
   * `expiries`: also name each lease as soon as it is known to have run out, where the backend
   * itself is slow to show it (etcd; the collector asks for it with its deadline timers).
   */
  watch?(onHint: (hint: ChangeHint) => void, signal: AbortSignal, options?: { expiries?: boolean }): Promise<void>;
  close(): Promise<void>;
}
