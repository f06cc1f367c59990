// Each source's canary lease as GET /api/v1/sources shows it: its calls' round trips over the
// last minute, hour and day, and its renewals minute by minute over the last hour, from the
// rollups its collector writes (lib/db/canary.ts, lib/collector/canary.ts).
import { Gauge, Registry } from 'prom-client';
import type { Config } from '../config';
import type { Store } from '../db';
import { readCanaryMinutes, type CanaryMinute } from '../db/canary';
import { CANARY_CALLS, mergeRollups, quantileOf, windowStats, type CanaryCall } from '../domain/canary-stats';
import type { CanaryView } from '../domain/schemas/canary';

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** The canary of every configured source that has one, by source name. */
export async function canaryViews(store: Store, config: Pick<Config, 'sources'>, nowWall: number): Promise<Map<string, CanaryView>> {
  const withCanary = config.sources.filter((source) => source.canary);
  const rows = await readCanaryMinutes(
    store,
    withCanary.map((source) => source.name),
    new Date(nowWall - DAY_MS),
  );
  const views = new Map<string, CanaryView>();
  for (const source of withCanary) {
    const own = rows.filter((row) => row.source === source.name);
    views.set(source.name, { key: source.canary!.key, ttlMs: source.canary!.ttlMs, everyMs: source.canary!.everyMs, ...canaryFigures(own, nowWall) });
  }
  return views;
}

/** One source's figures from its rollups of the last day. */
export function canaryFigures(rows: readonly CanaryMinute[], nowWall: number): Pick<CanaryView, 'calls' | 'minutes'> {
  // "The last minute" is the minute under way and the one before it: always the last 60 s, at most 120 s.
  const minuteStart = Math.floor(nowWall / MINUTE_MS) * MINUTE_MS - MINUTE_MS;
  const windows = (call: CanaryCall) => {
    const ofCall = rows.filter((row) => row.call === call);
    const since = (from: number) => windowStats(mergeRollups(ofCall.filter((row) => row.minute.getTime() >= from)));
    return { minute: since(minuteStart), hour: since(nowWall - HOUR_MS), day: since(nowWall - DAY_MS) };
  };
  const calls = Object.fromEntries(CANARY_CALLS.map((call) => [call, windows(call)])) as CanaryView['calls'];
  const minutes = rows
    .filter((row) => row.call === 'renew' && row.minute.getTime() >= nowWall - HOUR_MS && row.count > 0)
    .map((row) => ({ minute: row.minute.toISOString(), count: row.count, failed: row.failed, p50Ms: quantileOf(row, 0.5), p99Ms: quantileOf(row, 0.99), maxMs: Math.round(row.maxMs * 100) / 100 }));
  return { calls, minutes };
}

const WINDOW_LABELS = { minute: '1m', hour: '1h', day: '1d' } as const;

/**
 * The canaries' renewals as the store has them, for /metrics in every process (the histogram
 * leasehold_canary_renew_seconds is only in the process whose collector holds the canary):
 * quantiles, counts and failures over the last minute, hour and day.
 */
export async function canaryRegistry(store: Store, config: Pick<Config, 'sources'>, nowWall: number): Promise<Registry> {
  const registry = new Registry();
  const views = await canaryViews(store, config, nowWall);
  const quantiles = new Gauge({ name: 'leasehold_canary_renew_quantile_seconds', help: "Round trip of the canary's renewals at a quantile (1: the largest) over a window, as the store has them.", labelNames: ['quantile', 'source', 'window'], registers: [registry] });
  const count = new Gauge({ name: 'leasehold_canary_renewals', help: "The canary's renewals over a window, as the store has them.", labelNames: ['source', 'window'], registers: [registry] });
  const failed = new Gauge({ name: 'leasehold_canary_renewal_failures', help: "The canary's renewals that failed over a window, as the store has them.", labelNames: ['source', 'window'], registers: [registry] });
  for (const [source, view] of views) {
    for (const [name, window] of Object.entries(WINDOW_LABELS) as [keyof typeof WINDOW_LABELS, string][]) {
      const stats = view.calls.renew[name];
      count.set({ source, window }, stats.count);
      failed.set({ source, window }, stats.failed);
      for (const [quantile, ms] of [['0.5', stats.p50Ms], ['0.95', stats.p95Ms], ['0.99', stats.p99Ms], ['1', stats.maxMs]] as const) {
        if (ms !== null) quantiles.set({ quantile, source, window }, ms / 1000);
      }
    }
  }
  return registry;
}
