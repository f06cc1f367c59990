// The observer's parts on their own (lib/collector: read lanes, write queue, renewal batcher,
// source health) and the retry helper (lib/time), on a clock the test moves: no real sleeps,
// no store, no backend. The same parts against real backends: tests/integration/collector*.
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { Observation, TrackedLease } from '@/lib/domain/observe';
import { newTrackedLease } from '@/lib/domain/tracked-lease';
import { slicesOf } from '@/lib/collector/observe-parts';
import { ReadLanes, type LaneHandlers } from '@/lib/collector/read-lanes';
import { piecesOf, RenewalBatcher } from '@/lib/collector/renewal-batcher';
import { SourceHealth } from '@/lib/collector/source-health';
import type { WriteBatch, WrittenEvent } from '@/lib/db/observer-writes';
import { createWriteQueue, emptyBatch, mergeBatches, MERGE_LIMIT } from '@/lib/collector/write-queue';
import { SourceUnavailableError } from '@/lib/sources/errors';
import type { LeaseSource, PollResult } from '@/lib/sources/types';
import { Alarm, deadlineOf, progressDeadlineOf } from '@/lib/time/clock';
import { retrying } from '@/lib/time/retry';
import { ManualClock, settle } from '../support/manual-clock';

const writer = { collectorId: 'c1', token: 1n, ringSize: 16 };
const lease = (key: string, version = 1): TrackedLease => ({ ...newTrackedLease({ source: 's', backend: 'redis', startedMono: 0, startedWall: 0 }, 'lock', key), version });
const row = (status: 'up' | 'down', extra: Partial<NonNullable<WriteBatch['source']>> = {}) => ({ name: 's', backend: 'redis' as const, status, lastGoodReadAt: null, lastError: null, lastPollMs: null, pollMs: 1_000, detail: null, ...extra });

describe('write queue', () => {
  it('merges what queues behind a write in progress into one batch: later rows win, events add up, the source row keeps what the later one lacks', async () => {
    const written: WriteBatch[] = [];
    let release!: () => void;
    const queue = createWriteQueue(
      (batch) =>
        new Promise<WrittenEvent[]>((resolve) => {
          written.push(batch);
          release = () => resolve([]);
        }),
      () => {},
    );
    const first = queue.enqueue({ ...emptyBatch(writer, row('up')), dirty: [lease('a')] });
    const a2 = lease('a', 2);
    const second = queue.enqueue({ ...emptyBatch(writer, row('up', { lastGoodReadAt: 5, lastPollMs: 7 })), dirty: [lease('b')] });
    const third = queue.enqueue({ ...emptyBatch(writer, row('down', { lastError: 'gone' })), dirty: [a2], setStale: true });
    await settle();
    expect(written).toHaveLength(1);
    release();
    await first;
    await settle();
    expect(written).toHaveLength(2);
    const merged = written[1]!;
    expect(merged.dirty.map((l) => [l.key, l.version])).toEqual([
      ['b', 1],
      ['a', 2],
    ]);
    expect(merged.source).toMatchObject({ status: 'down', lastError: 'gone', lastGoodReadAt: 5, lastPollMs: 7 });
    expect(merged.setStale).toBe(true);
    release();
    expect(await second).toEqual([]);
    expect(await third).toEqual([]);
  });

  it('a write that throws resolves its waiters with undefined and hands the error over', async () => {
    const errors: unknown[] = [];
    const queue = createWriteQueue(() => Promise.reject(new Error('stale owner')), (error) => errors.push(error));
    expect(await queue.enqueue(emptyBatch(writer, null))).toBeUndefined();
    expect((errors[0] as Error).message).toBe('stale owner');
  });

  it('a batch given up (the observer stopped while the store was away) is not followed by a later one: a release is never skipped for the acquisition after it', async () => {
    // As observe-source.ts writes: each batch retried with backoff until the observer's signal aborts.
    const clock = new ManualClock();
    const stopped = new AbortController();
    let storeUp = false;
    const stored: string[] = [];
    const store = async (batch: WriteBatch): Promise<WrittenEvent[]> => {
      if (!storeUp) throw new Error('connect ECONNREFUSED');
      stored.push(...batch.dirty.map((l) => l.key));
      return [];
    };
    const queue = createWriteQueue((batch) => retrying(() => store(batch), { what: 'writing s to the store', signal: stopped.signal, clock }), () => {});
    const released = queue.enqueue({ ...emptyBatch(writer, null), dirty: [lease('released')] }); // the store is away: retried after a delay
    await clock.advance(100);
    const acquired = queue.enqueue({ ...emptyBatch(writer, null), dirty: [lease('acquired')] }); // queued behind it
    await settle();
    storeUp = true; // the store is back while the first waits out its delay...
    stopped.abort(); // ...and the ownership's renew deadline passes: the observer stops (the first attempt of a batch is made even so)
    expect(await released).toBeUndefined();
    expect(await acquired).toBeUndefined();
    await queue.idle();
    // What the store has of a source is a prefix of what it was given: never the acquisition without the release before it.
    expect(stored).toEqual([]);
  });

  it('merges no further than MERGE_LIMIT rows: a larger batch is written on its own, in order; the rows waiting are told', async () => {
    const written: number[] = [];
    const releases: (() => void)[] = [];
    const waiting: number[] = [];
    const queue = createWriteQueue(
      (batch) =>
        new Promise<WrittenEvent[]>((resolve) => {
          written.push(batch.dirty.length);
          releases.push(() => resolve([]));
        }),
      () => {},
      (rows) => waiting.push(rows),
    );
    const batchOf = (n: number, tag: string) => ({ ...emptyBatch(writer, null), dirty: Array.from({ length: n }, (_, i) => lease(`${tag}${i}`)) });
    const all = [queue.enqueue(batchOf(1, 'a')), queue.enqueue(batchOf(MERGE_LIMIT - 10, 'b')), queue.enqueue(batchOf(10, 'c')), queue.enqueue(batchOf(1, 'd'))];
    for (let i = 0; i < 3; i++) {
      await settle();
      releases.shift()?.();
    }
    await Promise.all(all);
    // The first alone (in progress); b and c merged up to the limit; d after them.
    expect(written).toEqual([1, MERGE_LIMIT, 1]);
    expect(waiting).toEqual([1, 0, MERGE_LIMIT - 10, MERGE_LIMIT, MERGE_LIMIT + 1, 1, 0]);
  });

  it('mergeBatches keeps one rollup per lease and minute, the later', () => {
    const stats = (count: number) => ({ count }) as never;
    const a = { ...emptyBatch(writer, null), rollups: [{ leaseId: 'x', minute: 1, stats: stats(1) }] };
    const b = { ...emptyBatch(writer, null), rollups: [{ leaseId: 'x', minute: 1, stats: stats(2) }, { leaseId: 'x', minute: 2, stats: stats(3) }] };
    expect(mergeBatches(a, b).rollups.map((r) => [r.minute, r.stats])).toEqual([
      [1, { count: 2 }],
      [2, { count: 3 }],
    ]);
  });

  it('mergeBatches keeps a batch renewal-only (its rows written in part) only when both are: a whole row is never cut down', () => {
    const renewed = { ...emptyBatch(writer, null), dirty: [lease('a', 2)], renewedOnly: true };
    const whole = { ...emptyBatch(writer, null), dirty: [lease('b', 1)] };
    expect(mergeBatches(renewed, { ...renewed, dirty: [lease('c', 3)] }).renewedOnly).toBe(true);
    expect(mergeBatches(renewed, whole).renewedOnly).toBeUndefined();
    expect(mergeBatches(whole, renewed).renewedOnly).toBeUndefined();
  });
});

describe('renewal batcher', () => {
  const renewal = (l: TrackedLease, seq: number, atWall: number) => ({ lease: l, seq, renewal: { atWall, holder: 'w', intervalMs: 1_000, marginMs: 9_000, marginUncertaintyMs: 0, ttlMs: 10_000 } });

  it('writes a minute\'s rollup once, after the minute is over, and everything still held when closing', async () => {
    const clock = new ManualClock(0);
    const batcher = new RenewalBatcher(clock);
    const l = lease('a');
    batcher.add([l], [renewal(l, 1, 10_000), renewal(l, 2, 20_000)]);
    const first = batcher.take()!;
    expect(first.dirty).toEqual([l]);
    expect(first.renewals.map((r) => r.seq)).toEqual([1, 2]);
    expect(first.rollups).toEqual([]); // the minute is not over
    expect(batcher.take()!.rollups).toEqual([]); // held, not written
    await clock.advance(66_000);
    const later = batcher.take()!;
    expect(later.rollups.map((r) => [r.leaseId, r.minute, r.stats.count])).toEqual([['s/a', 0, 2]]);
    expect(batcher.take()).toBeNull(); // once
    batcher.add([], [renewal(l, 3, 70_000)]);
    batcher.take();
    expect(batcher.take(true)!.rollups.map((r) => r.stats.count)).toEqual([1]);
  });

  it('a lease written with a state change is not written again with the renewals', () => {
    const batcher = new RenewalBatcher(new ManualClock());
    const l = lease('a');
    batcher.add([l], []);
    batcher.forget([l]);
    expect(batcher.take()).toBeNull();
  });

  it('flushes once a second on its clock, and stops with its signal', async () => {
    const clock = new ManualClock();
    const batcher = new RenewalBatcher(clock);
    const stop = new AbortController();
    let flushes = 0;
    const running = batcher.run(stop.signal, () => false, async () => void flushes++);
    await clock.advance(3_500);
    expect(flushes).toBe(3);
    stop.abort();
    await running;
    expect(flushes).toBe(4); // the sleep ends with the signal, and what is due is flushed
  });
});

describe('source health', () => {
  const source = { name: 's', backend: 'redis' as const, pollMs: 1_000 };

  it('down once with source_down; the same reason again writes nothing; a new reason within 5 s neither, after it yes; then up with source_up', async () => {
    const clock = new ManualClock();
    const health = new SourceHealth(source, { status: 'up', lastSourceSeq: 4 }, clock);
    const down = health.failed('refused', 1_000, 3)!;
    expect(down.newlyDown).toBe(true);
    expect(down.sourceEvents).toEqual([{ seq: 5, type: 'source_down', atWall: 1_000, detail: { error: 'refused' } }]);
    expect(down.row).toMatchObject({ status: 'down', lastError: 'refused' });
    expect(health.failed('refused', 2_000, 3)).toBeNull();
    expect(health.failed('timed out', 3_000, 3)).toBeNull();
    await clock.advance(5_000);
    expect(health.failed('timed out', 4_000, 3)).toMatchObject({ newlyDown: false, sourceEvents: [], row: { lastError: 'timed out' } });
    const up = health.answered({ kind: 'full', startedWall: 70_000 }, 12);
    expect(up.sourceEvents.map((e) => [e.seq, e.type])).toEqual([[6, 'source_up']]);
    expect(up).toMatchObject({ rowDue: true, row: { status: 'up', lastGoodReadAt: 70_000, lastPollMs: 12 } });
    expect(health.view(up.row)).toMatchObject({ status: 'up', downSince: null, lastGoodReadAt: new Date(70_000).toISOString() });
  });

  it('polls write the last good read once a second; keys reads never', () => {
    const health = new SourceHealth(source, { status: null, lastSourceSeq: 0 }, new ManualClock());
    expect(health.answered({ kind: 'poll', startedWall: 1_000 }, null).rowDue).toBe(true);
    expect(health.answered({ kind: 'poll', startedWall: 1_500 }, null).rowDue).toBe(false);
    expect(health.answered({ kind: 'keys', startedWall: 2_600 }, null)).toMatchObject({ rowDue: false, row: { lastGoodReadAt: null } });
    expect(health.answered({ kind: 'poll', startedWall: 2_600 }, null).rowDue).toBe(true);
  });

  it('names refused leases in lastError until they are written, and offers them again every 10 s', async () => {
    const clock = new ManualClock();
    const health = new SourceHealth(source, { status: null, lastSourceSeq: 0 }, clock);
    health.answered({ kind: 'full', startedWall: 0, unread: [{ prefix: 't/', reason: 'table t is locked' }] }, 1);
    expect(health.refusals([], [{ leaseId: 's/a', reason: 'too long' }])?.lastError).toBe('table t is locked; the store refused 1 lease of this source (s/a: too long)');
    expect(health.refusedDue()).toEqual(['s/a']);
    expect(health.refusedDue()).toBeNull();
    await clock.advance(10_000);
    expect(health.refusedDue()).toEqual(['s/a']);
    expect(health.refusals([{ id: 's/a' }], [])?.lastError).toBe('table t is locked');
    expect(health.refusedDue()).toBeNull();
  });
});

describe('read lanes', () => {
  type Call = [string, number];
  /** `written`: what each read's writes take (default: done at once), by what was read. */
  function lanes(source: Partial<LeaseSource>, clock: ManualClock, written: (what: string) => Promise<unknown> = () => Promise.resolve()) {
    const calls: Call[] = [];
    const errors: string[] = [];
    let down = false;
    const handlers: LaneHandlers = {
      onFullRead: async (result: PollResult) => {
        calls.push([`read:${result.kind}`, clock.mono()]);
        return { written: written(`read:${result.kind}`) };
      },
      onFullFailure: async (error) => {
        down = true;
        calls.push(['failed', clock.mono()]);
        errors.push((error as Error).message);
      },
      onKeysRead: async (result) => {
        calls.push([`keys:${result.covered.join(',')}`, clock.mono()]);
        return { written: written(`keys:${result.covered.join(',')}`) };
      },
      isDown: () => down,
      afterGap: () => false,
      onGap: () => void calls.push(['gap', clock.mono()]),
      stopped: () => false,
      log: () => {},
    };
    const full: LeaseSource = { name: 's', backend: 'redis', pollMs: 1_000, snapshot: async () => ({ observations: [], status: null }), ...source } as LeaseSource;
    return { calls, errors, lanes: new ReadLanes(full, handlers, clock), up: () => (down = false) };
  }

  it('reads everything every poll interval; a full hint reads at once', async () => {
    const clock = new ManualClock();
    const { calls, lanes: l } = lanes({}, clock);
    const stop = new AbortController();
    const running = l.run(stop.signal);
    await clock.advance(2_500);
    expect(calls).toEqual([
      ['read:full', 0],
      ['read:full', 1_000],
      ['read:full', 2_000],
    ]);
    l.hint({ full: true });
    await clock.advance(0);
    expect(calls.at(-1)).toEqual(['read:full', 2_500]);
    stop.abort();
    await running;
  });

  it('a gap hint is told to the observer at once, before the full read it asks for', async () => {
    const clock = new ManualClock();
    const { calls, lanes: l } = lanes({}, clock);
    const stop = new AbortController();
    const running = l.run(stop.signal);
    await clock.advance(500);
    l.hint({ full: true, gap: true, reason: 'the etcd watch was cut off' });
    // Synchronously: a targeted read that completes before the full read is judged across the gap.
    expect(calls.at(-1)).toEqual(['gap', 500]);
    await clock.advance(0);
    expect(calls.at(-1)).toEqual(['read:full', 500]);
    stop.abort();
    await running;
  });

  it('a failing source is tried again after a backoff with jitter, never sooner than its poll interval nor later than two, and a hint does not cut it short', async () => {
    const clock = new ManualClock();
    const { calls, lanes: l } = lanes({ snapshot: () => Promise.reject(new SourceUnavailableError('s', 'refused')) }, clock);
    const stop = new AbortController();
    const running = l.run(stop.signal);
    await clock.advance(1);
    l.hint({ full: true });
    await clock.advance(60_000);
    const at = calls.map(([, t]) => t);
    const gaps = at.slice(1).map((t, i) => t - at[i]!);
    expect(calls.every(([what]) => what === 'failed')).toBe(true);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(1_000);
    // Two polls at most (downRetryCapMs): a source that comes back is read within two polls.
    expect(Math.max(...gaps)).toBeLessThanOrEqual(2_000);
    expect(Math.max(...gaps)).toBeGreaterThan(1_000); // it grew
    expect(calls.length).toBeLessThan(55); // not once a poll interval (60)
    stop.abort();
    await running;
  });

  it('a read that never answers fails at its deadline (twice the poll interval, at least 5 s), whatever the adapter does with its signal', async () => {
    const clock = new ManualClock();
    const { calls, lanes: l } = lanes({ snapshot: () => new Promise(() => {}) }, clock);
    const stop = new AbortController();
    const running = l.run(stop.signal);
    await clock.advance(5_001);
    expect(calls).toEqual([['failed', 5_000]]);
    stop.abort();
    await running;
  });

  it('a full read that keeps answering is slow, not down: its deadline is of silence (5 s without progress), and 60 s in all', async () => {
    const clock = new ManualClock();
    /** A read of `batches` round trips of 2 s each, telling progress after each; then silent if `hangAfter`. */
    const batched = (batches: number, hangAfter = false) => async (signal: AbortSignal, progress?: () => void) => {
      for (let i = 0; i < batches; i++) {
        await clock.sleep(2_000, signal);
        if (signal.aborted) throw new Error('aborted');
        progress?.();
      }
      if (hangAfter) await new Promise(() => {});
      return { observations: [], status: null };
    };
    // Ten batches, 20 s in all: read, not failed.
    const slow = lanes({ snapshot: batched(10) }, clock);
    let stop = new AbortController();
    let running = slow.lanes.run(stop.signal);
    await clock.advance(20_001);
    expect(slow.calls[0]).toEqual(['read:full', 20_000]);
    stop.abort();
    await running;

    // Three batches, then silence: failed 5 s after the last answer.
    const hung = lanes({ snapshot: batched(3, true) }, clock);
    stop = new AbortController();
    running = hung.lanes.run(stop.signal);
    const at = clock.mono();
    await clock.advance(11_001);
    expect(hung.calls[0]).toEqual(['failed', at + 11_000]);
    expect(hung.errors[0]).toBe('s: no answer within 5 s');
    stop.abort();
    await running;

    // Answers without end: failed at 60 s, saying so.
    const endless = lanes({ snapshot: batched(1_000) }, clock);
    stop = new AbortController();
    running = endless.lanes.run(stop.signal);
    const from = clock.mono();
    await clock.advance(60_001);
    expect(endless.calls[0]).toEqual(['failed', from + 60_000]);
    expect(endless.errors[0]).toBe('s: a full read did not end within 60 s');
    stop.abort();
    await running;
  });

  it('hinted keys are read together after a few milliseconds, without waiting for the next poll', async () => {
    const clock = new ManualClock();
    const { calls, lanes: l } = lanes({ readKeys: async (keys: string[]) => ({ covered: keys, observations: [] }) }, clock);
    const stop = new AbortController();
    const running = l.run(stop.signal);
    await clock.advance(100);
    l.hint({ keys: ['a'] });
    l.hint({ keys: ['b', 'a'] });
    await clock.advance(10);
    expect(calls.filter(([what]) => what.startsWith('keys'))).toEqual([['keys:a,b', 105]]);
    stop.abort();
    await running;
  });

  it('an urgent hint (a change that may move a holder) is read at once on its own, not behind a read of renewed keys under way, and not again with them', async () => {
    const clock = new ManualClock();
    const readKeys = async (keys: string[]) => {
      if (keys.includes('renewed-1')) await clock.sleep(200); // hundreds of renewed keys take a while
      return { covered: keys, observations: [] };
    };
    const { calls, lanes: l } = lanes({ readKeys }, clock);
    const stop = new AbortController();
    const running = l.run(stop.signal);
    await clock.advance(100);
    const keyReads = () => calls.filter(([what]) => what.startsWith('keys'));
    l.hint({ keys: ['renewed-1', 'renewed-2'] });
    await clock.advance(10); // their read began at 105 and ends at 305
    l.hint({ keys: ['moved'], urgent: true });
    l.hint({ keys: ['moved', 'renewed-3'] }); // moved: waiting for its urgent read, not read twice
    await clock.advance(10);
    expect(keyReads()).toEqual([['keys:moved', 115]]);
    await clock.advance(300);
    expect(keyReads()).toEqual([
      ['keys:moved', 115],
      ['keys:renewed-1,renewed-2', 305],
      ['keys:renewed-3', 310],
    ]);
    stop.abort();
    await running;
  });

  it('a lane reads again while its last read is being written, but never two reads ahead of the store', async () => {
    const clock = new ManualClock();
    const writes = new Map<string, () => void>();
    const slowWrite = (what: string) => (what.startsWith('keys') ? new Promise<void>((resolve) => writes.set(what, resolve)) : Promise.resolve());
    const { calls, lanes: l } = lanes({ readKeys: async (keys: string[]) => ({ covered: keys, observations: [] }) }, clock, slowWrite);
    const stop = new AbortController();
    const running = l.run(stop.signal);
    await clock.advance(100);
    const keyReads = () => calls.filter(([what]) => what.startsWith('keys')).map(([what]) => what);
    l.hint({ keys: ['a'] });
    await clock.advance(10);
    l.hint({ keys: ['b'] }); // a's write is under way: b is read now
    await clock.advance(10);
    expect(keyReads()).toEqual(['keys:a', 'keys:b']);
    l.hint({ keys: ['c'] }); // a's write still is: c waits for it
    await clock.advance(100);
    expect(keyReads()).toEqual(['keys:a', 'keys:b']);
    writes.get('keys:a')!(); // a's write is in
    await clock.advance(10);
    expect(keyReads()).toEqual(['keys:a', 'keys:b', 'keys:c']);
    stop.abort();
    for (const resolve of writes.values()) resolve();
    await running;
  });

  it('a read whose writes fail ends the lane with that failure when it next reads, not as an unhandled rejection meanwhile', async () => {
    const clock = new ManualClock();
    let fail: (error: Error) => void = () => {};
    const failing = (what: string) => (what === 'keys:a' ? new Promise<void>((_, reject) => (fail = reject)) : Promise.resolve());
    const { lanes: l } = lanes({ readKeys: async (keys: string[]) => ({ covered: keys, observations: [] }) }, clock, failing);
    const stop = new AbortController();
    const running = l.run(stop.signal);
    running.catch(() => {});
    await clock.advance(100);
    l.hint({ keys: ['a'] });
    await clock.advance(10);
    fail(new Error('the store went away'));
    await clock.advance(1_000); // the lane sleeps meanwhile, holding the failed write
    l.hint({ keys: ['b'] });
    await clock.advance(10);
    await expect(running).rejects.toThrow('the store went away');
    stop.abort();
  });
});

describe('waits', () => {
  it('an alarm ends its sleep when woken or when its signal aborts, and leaves no listener on the signal', async () => {
    const clock = new ManualClock();
    const alarm = new Alarm(clock);
    const stop = new AbortController();
    for (let i = 0; i < 50; i++) {
      const sleeping = alarm.sleep(60_000, stop.signal);
      await settle();
      alarm.wake();
      await sleeping;
    }
    expect(clock.mono()).toBe(0);
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
    const last = alarm.sleep(60_000, stop.signal);
    stop.abort();
    await last;
    expect(clock.sleeping).toBe(0);
  });

  it('a deadline aborts its signal after its time on the clock, or with its parent, and dispose() leaves nothing behind', async () => {
    const clock = new ManualClock();
    const parent = new AbortController();
    const timed = deadlineOf(clock, parent.signal, 5_000);
    await clock.advance(4_999);
    expect(timed.signal.aborted).toBe(false);
    await clock.advance(1);
    expect(timed.signal.aborted).toBe(true);
    timed.dispose();
    const disposed = deadlineOf(clock, parent.signal, 5_000);
    disposed.dispose();
    await settle();
    expect(clock.sleeping).toBe(0);
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0);
    const withParent = deadlineOf(clock, parent.signal, 5_000);
    parent.abort();
    expect(withParent.signal.aborted).toBe(true);
  });
});

describe('a deadline of silence', () => {
  it('aborts after idleMs without progress or maxMs in all, says which, and dispose() leaves nothing behind', async () => {
    const clock = new ManualClock();
    const parent = new AbortController();
    const idle = progressDeadlineOf(clock, parent.signal, 5_000, 60_000);
    await clock.advance(4_000);
    idle.progress();
    await clock.advance(4_999);
    expect(idle.signal.aborted).toBe(false);
    await clock.advance(1);
    expect([idle.signal.aborted, idle.reason()]).toEqual([true, 'idle']);
    idle.dispose();
    const total = progressDeadlineOf(clock, parent.signal, 5_000, 12_000);
    for (let i = 0; i < 5; i++) {
      await clock.advance(2_000);
      total.progress();
    }
    expect(total.signal.aborted).toBe(false);
    await clock.advance(2_000);
    expect([total.signal.aborted, total.reason()]).toEqual([true, 'total']);
    total.dispose();
    const disposed = progressDeadlineOf(clock, parent.signal, 5_000, 60_000);
    disposed.dispose();
    await settle();
    expect(clock.sleeping).toBe(0);
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0);
    const withParent = progressDeadlineOf(clock, parent.signal, 5_000, 60_000);
    parent.abort();
    expect([withParent.signal.aborted, withParent.reason()]).toEqual([true, null]);
    withParent.dispose();
  });
});

describe('retrying', () => {
  it('tries again with growing delays until it works, and says why each time', async () => {
    const clock = new ManualClock();
    const delays: number[] = [];
    let attempts = 0;
    const result = retrying(
      async () => {
        if (++attempts < 4) throw new Error(`no ${attempts}`);
        return 'ok';
      },
      { what: 'x', signal: new AbortController().signal, clock, initialDelayMs: 200, maxDelayMs: 5_000, onFailure: (f) => delays.push(f.delayMs) },
    );
    await clock.advance(60_000);
    expect(await result).toBe('ok');
    expect(delays).toHaveLength(3);
    expect(delays.every((d) => d > 0 && d <= 5_000)).toBe(true);
  });

  it('makes no attempt once its signal aborted during a wait, and never waits less than its first delay', async () => {
    const clock = new ManualClock();
    const stop = new AbortController();
    const delays: number[] = [];
    let attempts = 0;
    const result = retrying(
      async () => {
        attempts++;
        throw new Error('down');
      },
      { what: 'x', signal: stop.signal, clock, initialDelayMs: 1_000, maxDelayMs: 10_000, onFailure: (f) => delays.push(f.delayMs) },
    );
    await clock.advance(60_000);
    const made = attempts;
    stop.abort();
    expect(await result).toBeUndefined();
    expect(attempts).toBe(made);
    expect(delays.length).toBeGreaterThan(4);
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(1_000);
    expect(Math.max(...delays)).toBeLessThanOrEqual(10_000);
  });

  it('stops when its signal aborts (undefined), and a fatal error is thrown at once', async () => {
    const clock = new ManualClock();
    const stop = new AbortController();
    const result = retrying(() => Promise.reject(new Error('down')), { what: 'x', signal: stop.signal, clock });
    await clock.advance(1_000);
    stop.abort();
    expect(await result).toBeUndefined();
    await expect(retrying(() => Promise.reject(new TypeError('fatal')), { what: 'x', signal: stop.signal, clock, fatal: (e) => e instanceof TypeError })).rejects.toThrow('fatal');
  });
});

describe('due renewals cut into pieces', () => {
  it('keeps every row once, in order, no piece over the limit; nothing due is one empty piece', () => {
    const due = {
      dirty: [lease('a'), lease('b'), lease('c')],
      renewals: Array.from({ length: 4 }, (_, i) => ({ seq: i }) as unknown as WriteBatch['renewals'][number]),
      rollups: [{ leaseId: 'x', minute: 0 }] as unknown as WriteBatch['rollups'],
    };
    const pieces = piecesOf(due, 3);
    expect(pieces.map((p) => [p.dirty.length, p.renewals.length, p.rollups.length])).toEqual([
      [3, 0, 0],
      [0, 3, 0],
      [0, 1, 1],
    ]);
    expect(pieces.flatMap((p) => p.renewals)).toEqual(due.renewals);
    expect(piecesOf({ dirty: [], renewals: [], rollups: [] }, 3)).toEqual([{ dirty: [], renewals: [], rollups: [] }]);
  });
});

describe('a large read cut into slices', () => {
  const observation = (key: string) => ({ key }) as Observation;

  it('keeps a small read whole', () => {
    expect(slicesOf([observation('a')], ['a', 'b'], 3)).toEqual([{ observations: [observation('a')], scope: ['a', 'b'] }]);
  });

  it('puts every key in one slice only, an observed key with its scope, and no slice over the size', () => {
    const observed = Array.from({ length: 25 }, (_, i) => observation(`k${i}`));
    const scope = [...Array.from({ length: 20 }, (_, i) => `k${i}`), 'gone1', 'gone2', 'gone3'];
    const slices = slicesOf(observed, scope, 4);
    for (const slice of slices) {
      expect(slice.observations.length).toBeLessThanOrEqual(4);
      expect(slice.scope.length).toBeLessThanOrEqual(4);
      // A scope key that is observed is in the same slice as its observation.
      for (const key of slice.scope) if (observed.some((o) => o.key === key)) expect(slice.observations.map((o) => o.key)).toContain(key);
    }
    expect(slices.flatMap((s) => s.observations.map((o) => o.key)).sort()).toEqual(observed.map((o) => o.key).sort());
    expect(slices.flatMap((s) => s.scope).sort()).toEqual([...scope].sort());
  });
});
