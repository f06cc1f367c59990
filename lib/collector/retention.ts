// Runs the store's retention (lib/db/retention.ts) from the collector: once at start, then
// every hour, until the collector stops. On PostgreSQL several collectors may share a store;
// each tries, and the one that takes the retention advisory lock does the run (the others
// find it taken and wait for the next hour). A run never waits on the collector's writes
// (lock_timeout); what it could not do is done on a later run. Never throws.
import type { Store } from '../db';
import { applyRetention, type RetentionPolicy, type RetentionReport } from '../db/retention';
import { metrics } from '../metrics';
import { systemClock, type Clock } from '../time/clock';

export const RETENTION_EVERY_MS = 3_600_000;

export type RetentionRunnerOptions = {
  store: Store;
  policy: RetentionPolicy;
  log: (line: string) => void;
  /**
   * Waits between runs. The partitions are real days, so a run's "now" is always the system's
   * wall clock, never a test's hand-moved one (whose wall may be years ahead).
   */
  clock?: Clock;
  everyMs?: number;
};

/** Starts the loop; it ends when `signal` aborts. */
export async function runRetention(options: RetentionRunnerOptions, signal: AbortSignal): Promise<void> {
  const clock = options.clock ?? systemClock;
  while (!signal.aborted) {
    await retentionOnce(options);
    await clock.sleep(options.everyMs ?? RETENTION_EVERY_MS, signal);
  }
}

/** One run, logged and counted; null when it failed (logged) or another process ran it. */
export async function retentionOnce(options: RetentionRunnerOptions): Promise<RetentionReport | null> {
  const { store, policy, log } = options;
  try {
    const report = await store.withSql((sql) => applyRetention(sql, policy, new Date(systemClock.wall())));
    if (!report.ran) return null;
    countRun(report);
    const said = describeRun(report);
    if (said) log(`retention: ${said}`);
    return report;
  } catch (error) {
    log(`retention failed (tried again in an hour): ${(error as Error)?.message ?? error}`);
    return null;
  }
}

function countRun(report: RetentionReport) {
  for (const name of report.dropped) metrics.inc('leasehold_retention_removed_total', { table: name.replace(/_p\d{8}$/, ''), what: 'partitions' });
  for (const [table, count] of Object.entries(report.deleted)) metrics.inc('leasehold_retention_removed_total', { table: table.replace(/_default$/, ''), what: 'rows' }, count);
  metrics.inc('leasehold_retention_runs_total', { outcome: report.busy.length > 0 ? 'busy' : 'done' });
}

/** One line of what a run did, or '' when it did nothing. */
export function describeRun(report: RetentionReport): string {
  const parts: string[] = [];
  if (report.dropped.length > 0) parts.push(`dropped ${report.dropped.length} partition${report.dropped.length === 1 ? '' : 's'} (${report.dropped.join(', ')}; ${(report.droppedBytes / 1_048_576).toFixed(1)} MiB)`);
  const deleted = Object.entries(report.deleted);
  if (deleted.length > 0) parts.push(`deleted ${deleted.map(([table, n]) => `${n} rows of ${table}`).join(', ')}`);
  if (report.created.length > 0) parts.push(`made ${report.created.length} partitions${report.moved > 0 ? ` (${report.moved} rows moved in from the default partitions)` : ''}`);
  if (report.busy.length > 0) parts.push(`left for the next run, the store being busy: ${report.busy.join(', ')}`);
  return parts.join('; ');
}
