// The lanes of reads of one source: full reads every poll interval (a snapshot, or the poll
// the source says is enough), and targeted reads of what a pushed change hint named, so a
// pushed change need not wait behind a slow full read. Targeted reads go in two lanes: keys
// hinted urgent (a change that may move a holder) are read on their own, so that a change of
// holder is not read in a batch of the hundreds of keys renewed meanwhile. The lanes decide
// when to read and with what deadline; what a read means is the observer's
// (observe-source.ts), told through LaneHandlers. A lane reads again while its last read's writes are under way, never two
// reads ahead of the store (Handed).
//
// A failing source costs next to nothing: every read has a deadline that does not depend on
// the adapter honouring its signal, and the next attempt waits a backoff with jitter (from the
// poll interval up to downRetryCapMs: two polls, at least 1 s, at most MAX_BACKOFF_MS), so
// that a source that comes back is read again within two polls (docs/reliability.md).
import { SourceUnavailableError } from '../sources/errors';
import type { ChangeHint, LeaseSource, PollResult } from '../sources/types';
import { Alarm, deadlineOf, progressDeadlineOf, unlessAborted, type Clock } from '../time/clock';
import { backoffDelays } from '../time/retry';

const HINT_COALESCE_MS = 5;
/** How long the keys lane sleeps with nothing hinted (a hint wakes it at once). */
const KEYS_IDLE_MS = 60_000;
/** A failing source is never left longer than this between attempts, whatever its poll interval. */
export const MAX_BACKOFF_MS = 10_000;

/**
 * The longest wait between two attempts at a failing source: two poll intervals, at least 1 s
 * (a closed port tried every 100 ms would be the loop the backoff exists to stop), at most
 * MAX_BACKOFF_MS. A failed attempt costs a refused connection or one deadline timer; a source
 * shown down for ten seconds after it came back costs the on-call engineer's trust.
 */
export function downRetryCapMs(pollMs: number): number {
  return Math.min(MAX_BACKOFF_MS, Math.max(1_000, 2 * pollMs));
}
/** The longest a full read may be given: a source this slow to read is down, whatever its size. */
export const MAX_FULL_READ_DEADLINE_MS = 60_000;

/**
 * How long one read may take before the source counts as down: twice the poll interval,
 * at least 5 s, at most 30 s. A source whose calls hang is down within this of the read that
 * hung (docs/configuring-sources.md says so).
 */
export function readDeadlineMs(pollMs: number): number {
  return Math.min(30_000, Math.max(5_000, 2 * pollMs));
}

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

/** When a read started, on both clocks. */
export type ReadStart = { startedMono: number; startedWall: number };

/**
 * What a completed read handed on: `written` settles once its writes are in. A lane reads again
 * while they are under way, but never two reads ahead: before its next read it waits for the
 * writes of the read before this one. (A pushed change read meanwhile then waits for one write,
 * not for a write and then a read.)
 */
export type Handed = { written: Promise<unknown> };

/** `written`, awaited later: a failure it ends with is thrown there, not reported as unhandled meanwhile. */
function handled(written: Promise<unknown>): Promise<unknown> {
  written.catch(() => {});
  return written;
}

export type LaneHandlers = {
  /** A full read or poll completed. */
  onFullRead(result: PollResult, start: ReadStart): Promise<Handed>;
  /**
   * The source said events may have been missed (its push stream was cut off, or fell behind
   * a compaction): every read is judged as after a gap until a full read begun after now.
   */
  onGap(): void;
  /** A full read or poll failed or ran out of time: the source is down. */
  onFullFailure(error: unknown, start: ReadStart): Promise<void>;
  /** A targeted read of hinted keys completed. */
  onKeysRead(result: { covered: string[]; observations: PollResult['observations'] }, start: ReadStart): Promise<Handed>;
  /** The source is down (the full lane decides when it is back; the keys lane waits). */
  isDown(): boolean;
  /** The last full read was not made (or not yet): the next one reads everything. */
  afterGap(): boolean;
  /** The observer must stop (a write found another collector owns the source). */
  stopped(): boolean;
  log(line: string): void;
};

export class ReadLanes {
  /** What to read next: everything (poll due, hint, after a failure), some keys, and urgent keys. */
  private readonly pending = { full: true, keys: new Set<string>(), urgent: new Set<string>() };
  private readonly fullAlarm: Alarm;
  private readonly keysAlarm: Alarm;
  private readonly urgentAlarm: Alarm;
  private readonly readTimeoutMs: number;

  constructor(
    private readonly source: LeaseSource,
    private readonly handlers: LaneHandlers,
    private readonly clock: Clock,
  ) {
    this.fullAlarm = new Alarm(clock);
    this.keysAlarm = new Alarm(clock);
    this.urgentAlarm = new Alarm(clock);
    this.readTimeoutMs = readDeadlineMs(source.pollMs);
  }

  /** A change hint from the source's push stream. */
  hint = (hint: ChangeHint): void => {
    if (hint.gap) {
      // Told at once, not with the next full read: a targeted read made before that one (a
      // deadline's, another hint's) must not judge a change it finds as if nothing was missed.
      this.handlers.onGap();
      this.handlers.log(`${this.source.name}: ${hint.reason ?? 'events may have been missed'}; reading everything again`);
    }
    if (hint.full) {
      this.pending.full = true;
      this.fullAlarm.wake();
    }
    if (hint.keys?.length && hint.urgent) {
      for (const key of hint.keys) {
        this.pending.urgent.add(key);
        this.pending.keys.delete(key);
      }
      this.urgentAlarm.wake();
    } else if (hint.keys?.length) {
      // A key already waiting for an urgent read is not read twice (a Redis SET with PX sends `set`, then `expire`).
      const before = this.pending.keys.size;
      for (const key of hint.keys) if (!this.pending.urgent.has(key)) this.pending.keys.add(key);
      if (this.pending.keys.size > before) this.keysAlarm.wake();
    }
  };

  /** Every lane, until the signal aborts or the observer must stop. */
  run(signal: AbortSignal): Promise<unknown> {
    return Promise.all([this.fullLane(signal), this.keysLane(signal, this.pending.keys, this.keysAlarm), this.keysLane(signal, this.pending.urgent, this.urgentAlarm)]);
  }

  private tooSlowAfter(ms: number) {
    return () => new SourceUnavailableError(this.source.name, `no answer within ${Math.round(ms / 100) / 10} s`);
  }

  private async fullLane(signal: AbortSignal) {
    const { source, pending, handlers, clock } = this;
    let nextFullAt = clock.mono();
    // While the source fails: the delays until the next attempt (null while it answers).
    let backoff: (() => number) | null = null;
    let fullDeadlineMs = this.readTimeoutMs;
    let writing: Promise<unknown> = Promise.resolve(); // the last read's writes (Handed)
    while (!signal.aborted && !handlers.stopped()) {
      // 1. Wait for the next poll; a hint asks for a read now, unless the source is failing:
      //    then its backoff holds.
      const untilPoll = nextFullAt - clock.mono();
      if (untilPoll > 0 && (!pending.full || backoff !== null)) {
        await this.fullAlarm.sleep(untilPoll, signal);
        continue;
      }
      const askedFull = pending.full;
      pending.full = false;
      nextFullAt = clock.mono() + source.pollMs;
      const start = { startedMono: clock.mono(), startedWall: clock.wall() };
      // 2. Read, within the deadline. After a gap, or when a hint asked for everything, a full
      //    snapshot; otherwise what the source says a poll needs (only a liveness check while
      //    its push stream is live).
      //    The deadline is of silence: a read of many batches that keeps answering is given
      //    up to MAX_FULL_READ_DEADLINE_MS in all (a source of 100,000 keys on a busy machine
      //    is slow, not down).
      const deadline = progressDeadlineOf(clock, signal, fullDeadlineMs, MAX_FULL_READ_DEADLINE_MS);
      let result: PollResult;
      try {
        const reading =
          askedFull || handlers.afterGap() || backoff !== null || !source.poll
            ? source.snapshot(deadline.signal, deadline.progress).then((snapshot): PollResult => ({ kind: 'full', ...snapshot }))
            : source.poll(deadline.signal, deadline.progress);
        const tooSlow = this.tooSlowAfter(fullDeadlineMs);
        result = await unlessAborted(reading, deadline.signal, () =>
          deadline.reason() === 'total' ? new SourceUnavailableError(source.name, `a full read did not end within ${MAX_FULL_READ_DEADLINE_MS / 1000} s`) : tooSlow(),
        );
      } catch (error) {
        if (signal.aborted) return;
        // 3. Failed: down, and tried again after a backoff (a read that ran out of time gets longer next time).
        if (deadline.signal.aborted) fullDeadlineMs = nextFullReadDeadlineMs(this.readTimeoutMs, { ok: false, timedOutAfterMs: fullDeadlineMs });
        await handlers.onFullFailure(error, start);
        backoff ??= backoffDelays(source.pollMs, Math.max(source.pollMs, downRetryCapMs(source.pollMs)));
        // The jitter may draw less than its initial delay: never sooner than the next poll would have been.
        nextFullAt = clock.mono() + Math.max(source.pollMs, backoff());
        pending.full = true;
        continue;
      } finally {
        deadline.dispose();
      }
      // 4. Answered: the backoff is over, and the next deadline fits how long a full read takes.
      backoff = null;
      if (result.kind === 'full') fullDeadlineMs = nextFullReadDeadlineMs(this.readTimeoutMs, { ok: true, durationMs: clock.mono() - start.startedMono });
      const { written } = await handlers.onFullRead(result, start);
      await writing;
      writing = handled(written);
    }
    await writing;
  }

  /** Targeted reads of the keys hinted into `hinted` (woken by `alarm`). */
  private async keysLane(signal: AbortSignal, hinted: Set<string>, alarm: Alarm) {
    const { source, pending, handlers, clock } = this;
    if (!source.readKeys) return;
    let writing: Promise<unknown> = Promise.resolve();
    while (!signal.aborted && !handlers.stopped()) {
      if (hinted.size === 0) {
        await alarm.sleep(KEYS_IDLE_MS, signal);
        continue;
      }
      // 1. Let a burst of hints arrive (a few ms), then read them together; everything hinted
      //    while this read runs is coalesced into the next one.
      await clock.sleep(HINT_COALESCE_MS, signal);
      if (signal.aborted) return;
      const keys = [...hinted];
      hinted.clear();
      const start = { startedMono: clock.mono(), startedWall: clock.wall() };
      const deadline = deadlineOf(clock, signal, this.readTimeoutMs);
      let result;
      try {
        result = await unlessAborted(source.readKeys(keys, deadline.signal), deadline.signal, this.tooSlowAfter(this.readTimeoutMs));
      } catch {
        // 2. A targeted read that fails proves little on its own: ask for a full read now,
        //    which will say whether the source is down (a source already down keeps its backoff).
        pending.full = true;
        if (!handlers.isDown()) this.fullAlarm.wake();
        continue;
      } finally {
        deadline.dispose();
      }
      // 3. Applied, unless the source is down: the full lane decides when it is back.
      if (handlers.isDown()) continue;
      const { written } = await handlers.onKeysRead(result, start);
      await writing;
      writing = handled(written);
    }
    await writing;
  }
}
