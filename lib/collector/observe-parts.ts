// Small parts of observing a source (observe-source.ts): how the store is retried, the
// per-state lease counts on /metrics, the deadline timers' targeted reads, the leases of
// parts a full read could not read, and the leases the store refused, offered again.
import { DeadlineTimers } from '../alerts/deadlines';
import type { LeaseSource, UnreadScope } from '../sources/types';
import type { ReadLanes } from './read-lanes';
import { StaleOwnerError } from '../db/observer-writes';
import type { TrackedLease } from '../domain/observe';
import { metrics } from '../metrics';
import type { Clock } from '../time/clock';
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
