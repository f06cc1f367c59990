// Small parts of observing a source (observe-source.ts): how the store is retried, the
// per-state lease counts on /metrics, the deadline timers' targeted reads, the leases of
// parts a full read could not read, the leases the store refused, offered again, and a
// large read cut into slices.
import { DeadlineTimers } from '../alerts/deadlines';
import type { LeaseSource, UnreadScope } from '../sources/types';
import type { ReadLanes } from './read-lanes';
import { StaleOwnerError } from '../db/observer-writes';
import type { AppliedRead } from '../domain/apply-read';
import type { Observation, TrackedLease } from '../domain/observe';
import { eventView, leaseView } from '../domain/views';
import type { Bus } from '../live/bus';
import type { WrittenEvent } from '../db/observer-writes';
import { metrics } from '../metrics';
import { breathe, ITEMS_PER_BREATH, type Clock } from '../time/clock';
import type { SourceHealth } from './source-health';
import { retryLine } from '../time/retry';

/** How the store is retried: with backoff, counted and logged, never after another collector took the source. */
export function storeRetry(options: { log: (line: string) => void }, signal: AbortSignal, clock: Clock, what: string) {
  return {
    what,
    signal,
    clock,
    fatal: (error: unknown) => error instanceof StaleOwnerError,
    onFailure: (failure: Parameters<typeof retryLine>[0]) => {
      metrics.inc('leasehold_store_write_failures_total', {});
      options.log(retryLine(failure));
    },
  };
}

export function countStates(source: string, known: Map<string, TrackedLease>) {
  const counts: Record<string, number> = { held: 0, free: 0, expired: 0, unknown: 0, stale: 0 };
  for (const lease of known.values()) counts[lease.stale ? 'stale' : lease.state]! += 1;
  for (const [state, count] of Object.entries(counts)) metrics.set('leasehold_tracked_leases', { source, state }, count);
}

/** Deadline timers whose passing deadlines are read at once, alone (or in a full read, for a source that cannot read keys). */
export function deadlineTimers(source: LeaseSource, lanes: ReadLanes, clock: Clock): DeadlineTimers {
  return new DeadlineTimers(clock, (keys) => {
    metrics.inc('leasehold_deadline_reads_total', { source: source.name }, keys.length);
    lanes.hint(source.readKeys ? { keys } : { full: true });
  });
}

/** Marks the leases of parts a full read could not read stale (each once); returns them. */
export function hideUnread(known: ReadonlyMap<string, TrackedLease>, unread: readonly UnreadScope[]): TrackedLease[] {
  const hidden: TrackedLease[] = [];
  if (unread.length === 0) return hidden;
  for (const lease of known.values()) {
    if (lease.stale || !unread.some((part) => lease.key.startsWith(part.prefix))) continue;
    lease.stale = true;
    lease.version += 1;
    hidden.push(lease);
  }
  return hidden;
}

/** The leases the store refused that are due to be offered again (as they are now); those gone since are forgotten. */
export function refusedAgain(health: SourceHealth, known: ReadonlyMap<string, TrackedLease>, source: string): TrackedLease[] {
  const ids = health.refusedDue();
  if (!ids) return [];
  const keyOf = (id: string) => id.slice(source.length + 1);
  health.forgetRefused(ids.filter((id) => !known.has(keyOf(id))));
  return ids.map((id) => known.get(keyOf(id))).filter((lease) => lease !== undefined);
}

export type Slice = { observations: Observation[]; scope: string[] };

/** How many leases of a read are applied at once before the event loop is let go (a few ms of work; one source's slice runs beside the others'). */
export const APPLY_SLICE = 1_000;

/**
 * A read's observations and the keys it speaks for (`scope`: a key in it and not observed is
 * gone), cut into slices of about `size` leases, each key in one slice only. A small read is
 * one slice.
 */
export function slicesOf(observations: readonly Observation[], scope: readonly string[], size = APPLY_SLICE): Slice[] {
  if (observations.length <= size && scope.length <= size) return [{ observations: [...observations], scope: [...scope] }];
  const slices: Slice[] = [];
  let slice: Slice = { observations: [], scope: [] };
  const next = () => {
    slices.push(slice);
    slice = { observations: [], scope: [] };
  };
  const notObserved = new Set(scope);
  for (const o of observations) {
    slice.observations.push(o);
    if (notObserved.delete(o.key)) slice.scope.push(o.key);
    if (slice.observations.length >= size) next();
  }
  for (const key of notObserved) {
    slice.scope.push(key);
    if (slice.scope.length >= size) next();
  }
  if (slice.observations.length || slice.scope.length) next();
  return slices;
}

/** Tells the live stream what a written batch changed: its leases, and its events under the ids the store gave them. */
export function publishWritten(bus: Bus, nowWall: number, applied: AppliedRead, published: readonly TrackedLease[], written: WrittenEvent[] | undefined) {
  if (!written) return;
  for (const lease of published) bus.publish({ type: 'lease', lease: leaseView(lease, nowWall) });
  const ids = new Map(written.map((w) => [`${w.leaseId}#${w.seq}`, w.id]));
  for (const { lease, seq, change } of applied.events) {
    const id = ids.get(`${lease.id}#${seq}`);
    if (id) bus.publish({ type: 'event', event: eventView(id, lease.id, change) });
  }
}

/**
 * A partial read that speaks for every lease under `prefixes`: those it did not cover were
 * read unchanged, so they count as observed by it (as a full read that found them unchanged
 * would count them), unless a read begun later already moved them forward.
 */
export async function observedUnchanged(known: ReadonlyMap<string, TrackedLease>, prefixes: readonly string[] | undefined, covered: readonly string[], read: { startedMono: number; startedWall: number }): Promise<void> {
  if (!prefixes?.length) return;
  const seen = new Set(covered);
  let done = 0;
  for (const [key, lease] of known) {
    if (++done % ITEMS_PER_BREATH === 0) await breathe(); // every lease of a table, every poll: with the loop let go
    if (lease.stale || lease.observedAtMono >= read.startedMono || seen.has(key) || !prefixes.some((prefix) => key.startsWith(prefix))) continue;
    lease.observedAtMono = read.startedMono;
    lease.observedAtWall = read.startedWall;
  }
}
