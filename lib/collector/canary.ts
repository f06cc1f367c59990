// A source's canary lease (docs/configuring-sources.md, "Canary leases"): while this collector
// owns a source whose config has `canary`, it holds the canary's key with lib/lease in the
// source's own layout, one call every `everyMs` (an acquire until it holds it, then renewals),
// and releases it when it stops owning the source. Each call's round trip (lib/lease's
// onTiming) goes to /metrics, to the alert engine (the slow_renewals rule) and, rolled up per
// minute, to the store (lib/db/canary.ts), where the sources page reads it.
//
// The canary never stands in the observer's way: whatever it meets (a backend down, a key
// held by someone else, a store that fails) is counted, logged once, and tried again.
import type { AlertEngine } from '../alerts/engine';
import type { Store } from '../db';
import { addCanaryMinutes, pruneCanaryMinutes } from '../db/canary';
import { addRoundTrip, emptyRollup, mergeRollups, RecentRoundTrips, type CanaryCall, type RoundTripRollup } from '../domain/canary-stats';
import { createLeaseClient, LeaseLostError, type Lease, type LeaseClient, type LeaseTiming } from '../lease';
import { metrics } from '../metrics';
import type { CanaryTarget } from '../sources/backend';
import type { CanaryEntry } from '../sources/config-parts';
import type { ChangeHint, LeaseSource, PollResult, Progress, SourceSnapshot } from '../sources/types';
import type { Clock } from '../time/clock';

/** How often the minutes' rollups go to the store. */
const FLUSH_EVERY_MS = 5_000;
/** How often rollups older than a couple of days are dropped. */
const PRUNE_EVERY_MS = 3_600_000;
/** Rollups kept while the store fails, at most (a minute per call each: hours of them). */
const MAX_PENDING = 1_000;

export type CanaryOptions = {
  source: string;
  canary: CanaryEntry;
  target: Extract<CanaryTarget, { client: unknown }>;
  /** Who holds it: this collector. */
  collectorId: string;
  store: Store;
  alerts?: AlertEngine;
  clock: Clock;
  log: (line: string) => void;
};

/**
 * Starts the canary beside an observer: it runs until `signal` aborts or the returned stop is
 * called (the observer ended: ownership lost), and stop resolves once it has released the lease.
 */
export function startCanary(options: CanaryOptions, signal: AbortSignal): () => Promise<void> {
  const own = new AbortController();
  const abort = () => own.abort();
  signal.addEventListener('abort', abort, { once: true });
  const running = runCanary(options, own.signal);
  return async () => {
    own.abort();
    signal.removeEventListener('abort', abort);
    await running;
  };
}

/** Holds the canary until `signal` aborts, then releases it. Never throws. */
export async function runCanary(options: CanaryOptions, signal: AbortSignal): Promise<void> {
  let canary: Canary;
  try {
    canary = new Canary(options);
  } catch (error) {
    options.log(`${options.source}: canary not started: ${(error as Error)?.message ?? error}`);
    return;
  }
  await canary.run(signal);
}

class Canary {
  private readonly client: LeaseClient;
  private readonly recent = new RecentRoundTrips();
  /** Rollups not yet written: by call and minute. */
  private pending = new Map<string, { call: CanaryCall; minute: number; rollup: RoundTripRollup }>();
  private lease: Lease | null = null;
  /** What went wrong last, said once until the canary works again. */
  private trouble: string | null = null;

  constructor(private readonly options: CanaryOptions) {
    const { target, canary } = options;
    // A call that takes longer than the TTL has lost the lease anyway.
    this.client = createLeaseClient({ ...target.client, callTimeoutMs: Math.min(5_000, canary.ttlMs), onTiming: (timing) => this.timed(timing) });
    metrics.inc('leasehold_canary_calls_total', { source: options.source, call: 'renew', outcome: 'ok' }, 0);
  }

  async run(signal: AbortSignal): Promise<void> {
    const { clock, canary } = this.options;
    let nextFlush = clock.mono() + FLUSH_EVERY_MS;
    let nextPrune = clock.mono();
    let due = clock.mono();
    try {
      while (!signal.aborted) {
        await this.step(signal);
        if (clock.mono() >= nextFlush) {
          nextFlush = clock.mono() + FLUSH_EVERY_MS;
          await this.flush();
        }
        if (clock.mono() >= nextPrune) {
          nextPrune = clock.mono() + PRUNE_EVERY_MS;
          await pruneCanaryMinutes(this.options.store, new Date(clock.wall())).catch(() => 0);
        }
        // One call per everyMs: a slow call is not followed by a burst.
        due = Math.max(due + canary.everyMs, clock.mono());
        await clock.sleep(due - clock.mono(), signal);
      }
    } finally {
      await this.stop();
    }
  }

  /** One call: an acquire until the canary is held, a renewal after. */
  private async step(signal: AbortSignal) {
    const { canary, collectorId } = this.options;
    try {
      if (this.lease) this.lease = await this.client.renew(this.lease, { signal });
      else this.lease = await this.client.acquire(canary.key, { holder: `leasehold-canary ${collectorId}`.slice(0, 170), ttlMs: canary.ttlMs, signal });
    } catch (error) {
      // Lost: acquire it again. No answer: it may still be ours; the next renewal tells.
      if (error instanceof LeaseLostError) this.lease = null;
    }
  }

  private async stop() {
    const lease = this.lease;
    this.lease = null;
    if (lease) await this.client.release(lease).catch(() => false);
    await this.flush();
    await this.client.close().catch(() => {});
  }

  /** One call's timing, as lib/lease reports it. */
  private timed(timing: LeaseTiming) {
    const { source, canary, alerts, clock } = this.options;
    if (timing.outcome === 'aborted') return; // this collector stopped: nothing was measured
    const ok = timing.outcome === 'ok' || timing.outcome === 'busy';
    metrics.inc('leasehold_canary_calls_total', { source, call: timing.call, outcome: timing.outcome });
    this.add(timing.call, timing.at.getTime(), timing.rttMs, ok);
    if (timing.call === 'renew') {
      metrics.observe('leasehold_canary_renew_seconds', { source }, timing.rttMs / 1000);
      this.recent.add(clock.mono(), timing.rttMs);
    }
    this.say(timing);
    alerts?.canary({ source, key: canary.key, call: timing.call, rttMs: timing.rttMs, ok, outcome: timing.outcome, p99Ms: this.recent.p99(clock.mono()), ttlMs: canary.ttlMs });
  }

  private add(call: CanaryCall, atWall: number, rttMs: number, ok: boolean) {
    const minute = Math.floor(atWall / 60_000) * 60_000;
    const id = `${call} ${minute}`;
    let entry = this.pending.get(id);
    if (!entry) this.pending.set(id, (entry = { call, minute, rollup: emptyRollup() }));
    addRoundTrip(entry.rollup, rttMs, ok);
  }

  /** The log hears of trouble once, and of the canary working again. */
  private say(timing: LeaseTiming) {
    const { source, canary, log } = this.options;
    const trouble =
      timing.outcome === 'ok' ? null : timing.outcome === 'busy' ? `${canary.key} is held by someone else; trying again every ${canary.everyMs} ms` : `${timing.call} ${timing.outcome}: ${timing.error?.message ?? ''}`;
    if (trouble === this.trouble) return;
    if (trouble !== null) log(`${source}: canary: ${trouble}`);
    else if (this.trouble !== null) log(`${source}: canary holds ${canary.key} again`);
    this.trouble = trouble;
  }

  private async flush() {
    if (this.pending.size === 0) return;
    const taken = this.pending;
    this.pending = new Map();
    const minutes = [...taken.values()].map(({ call, minute, rollup }) => ({ source: this.options.source, call, minute: new Date(minute), ...rollup }));
    try {
      await addCanaryMinutes(this.options.store, minutes);
    } catch (error) {
      // Kept for the next flush (merged with what came since), the oldest dropped beyond a bound.
      const kept = new Map(taken);
      for (const [id, since] of this.pending) {
        const old = kept.get(id);
        kept.set(id, old ? { ...old, rollup: mergeRollups([old.rollup, since.rollup]) } : since);
      }
      this.pending = kept;
      while (this.pending.size > MAX_PENDING) this.pending.delete(this.pending.keys().next().value!);
      this.options.log(`${this.options.source}: canary timings could not be written (${(error as Error)?.message ?? error}); trying again`);
    }
  }
}

/**
 * The source without its canary's key: the canary is Leasehold's own probe, shown on the
 * sources page, not one of the user's leases (no failover, no missed renewal of it when
 * collectors hand the source over, no row in the lease list, no per-lease series).
 */
export function hidingCanary(source: LeaseSource, observedKey: string): LeaseSource {
  const keep = <T extends { observations: SourceSnapshot['observations'] }>(result: T): T => ({ ...result, observations: result.observations.filter((o) => o.key !== observedKey) });
  const keepPoll = (result: PollResult): PollResult => (result.kind === 'full' ? keep(result) : { ...keep(result), covered: result.covered.filter((key) => key !== observedKey) });
  return new Proxy(source, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== 'function') return value;
      if (property === 'snapshot') return (signal: AbortSignal, progress?: Progress) => target.snapshot(signal, progress).then(keep);
      if (property === 'poll') return (signal: AbortSignal, progress?: Progress) => target.poll!(signal, progress).then(keepPoll);
      // The canary's own changes are not read at all: a push about its key alone asks for nothing
      // (each renewal would otherwise cost the backend a read of the key as well).
      if (property === 'readKeys') return (keys: string[], signal: AbortSignal) => target.readKeys!(keys.filter((key) => key !== observedKey), signal).then((r) => ({ ...keep(r), covered: r.covered.filter((key) => key !== observedKey) }));
      if (property === 'watch') {
        return (onHint: (hint: ChangeHint) => void, signal: AbortSignal, options?: { expiries?: boolean }) =>
          target.watch!(
            (hint) => {
              const keys = hint.keys?.filter((key) => key !== observedKey);
              if (keys && keys.length === 0 && !hint.full && !hint.gap) return;
              onHint(keys ? { ...hint, keys } : hint);
            },
            signal,
            options,
          );
      }
      return (value as (...args: unknown[]) => unknown).bind(target);
    },
  });
}
