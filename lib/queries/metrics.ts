// The store's series for /metrics, written (and escaped) by prom-client. Each scrape gets
// registries of its own, made anew: a lease or source that is gone leaves no series behind,
// and two scrapes at once share no gauge. app/metrics/route.ts merges them with the process's.
import { Gauge, Registry } from 'prom-client';
import type { Store } from '../db';
import { leaseCountsByState } from '../db/leases';
import { readSources } from '../db/sources';
import { recentHolderFigures, type HolderFigures } from '../db/telemetry';
import { systemClock } from '../time/clock';
import type { LeaseView } from '../domain/types';
import { currentLeases, type LeaseCacheRoot } from './lease-cache';

const gauge = (registry: Registry, name: string, help: string, labelNames: string[] = []) => new Gauge({ name, help, labelNames, registers: [registry] });

const storeUp = (value: 0 | 1) => {
  const registry = new Registry();
  gauge(registry, 'leasehold_store_up', '1 when the store answered this scrape.').set(value);
  return registry;
};

/** Store-wide series: leases by source and state, sources up or down and who observes them. */
export async function storeRegistry(store: Store): Promise<Registry> {
  const [byState, sources] = await Promise.all([
    leaseCountsByState(store),
    readSources(store),
  ]);
  const registry = storeUp(1);
  const leases = gauge(registry, 'leasehold_leases', 'Leases in the store by source and state (stale: its source cannot be read).', ['source', 'state']);
  // Stale leases of every state add up to one series.
  for (const row of byState) leases.inc({ source: row.source, state: row.stale ? 'stale' : row.state }, row.count);
  const status = gauge(registry, 'leasehold_source_status', '1 when the last read of the source succeeded, as the store records it.', ['source']);
  for (const source of sources) status.set({ source: source.name }, source.status === 'up' ? 1 : 0);
  const lastRead = gauge(registry, 'leasehold_source_last_read_timestamp_seconds', 'Time of the last good read of the source.', ['source']);
  for (const source of sources) if (source.lastGoodReadAt) lastRead.set({ source: source.name }, source.lastGoodReadAt.getTime() / 1000);
  const collector = gauge(registry, 'leasehold_source_collector', 'The collector that observes each source.', ['source', 'collector']);
  for (const source of sources) if (source.collectorId) collector.set({ source: source.name, collector: source.collectorId }, 1);
  return registry;
}

/** The store's series when the store did not answer: leasehold_store_up 0, and nothing else. */
export const storeDownRegistry = () => storeUp(0);

/**
 * One set of series per lease, the way kube-state-metrics exposes Kubernetes Lease objects
 * (kube_lease_owner, kube_lease_renew_time), for the first `limit` leases in (source, key)
 * order: so a team's own Prometheus can graph and alert on a lease. Labels: `source`, and
 * `lease`, the lease's id as the API and the console name it (unique, unlike a key cut short).
 * A series is left out where its value is not known (no expiry, no token, no renewal yet).
 * Cost: up to 6 series per lease, and the holder series changes with each change of hands.
 */
export async function leaseRegistry(root: LeaseCacheRoot, store: Store, limit: number, nowWall = systemClock.wall()): Promise<Registry> {
  const { leases, total } = limit > 0 ? await currentLeases(root, store, limit) : { leases: [], total: 0 };
  const registry = leaseSeries(leases, total, limit);
  const figures = await recentHolderFigures(store, leases.map((lease) => lease.id), new Date(nowWall - HOLDER_WINDOW_MS), new Date(nowWall), limit);
  holderSeries(registry, figures, new Map(leases.map((lease) => [lease.id, lease.source])));
  return registry;
}

/** How far back holders' reports count for their series. */
const HOLDER_WINDOW_MS = 5 * 60_000;

/**
 * What holders reported of the exported leases over the last 5 minutes (POST /api/v1/telemetry),
 * one set per lease and holder, at most as many holders as leases are exported. Labels:
 * `lease`, `source`, `holder`. A lease no holder reports on has none.
 */
export function holderSeries(registry: Registry, figures: readonly HolderFigures[], sourceOf: ReadonlyMap<string, string>): void {
  const families: [name: string, help: string, value: (figure: HolderFigures) => number | null][] = [
    ['leasehold_lease_holder_claims', 'Whether the holder, by its own reports, believes it holds the lease now (1) or not (0).', (f) => (f.claims ? 1 : 0)],
    ['leasehold_lease_holder_renewals_last_5m', 'Renewals the holder reported over the last 5 minutes.', (f) => f.renewals],
    ['leasehold_lease_holder_renewal_failures_last_5m', 'Renewals the holder reported failed over the last 5 minutes.', (f) => f.failed],
    ['leasehold_lease_holder_renewal_rtt_max_seconds', 'The slowest renewal round trip the holder reported over the last 5 minutes.', (f) => seconds(f.rttMaxMs)],
    ['leasehold_lease_holder_renewal_late_max_seconds', 'How late against its own schedule the holder ran a renewal at most over the last 5 minutes, when it said.', (f) => seconds(f.lateMaxMs)],
  ];
  for (const [name, help, value] of families) {
    const family = gauge(registry, name, help, ['holder', 'lease', 'source']);
    for (const figure of figures) {
      const v = value(figure);
      if (v !== null) family.set({ holder: figure.holder, lease: figure.leaseId, source: sourceOf.get(figure.leaseId) ?? '' }, v);
    }
  }
}

const seconds = (ms: number | null) => (ms === null ? null : ms / 1000);

/** The per-lease series of `leases` (the first `limit` of `total`), in a new registry. */
export function leaseSeries(leases: LeaseView[], total: number, limit: number): Registry {
  const registry = new Registry();
  gauge(registry, 'leasehold_lease_series_limit', 'Leases exported one by one at most (metrics.leaseSeriesLimit in the config; 0: none).').set(limit);
  gauge(registry, 'leasehold_lease_series_omitted', 'Leases not exported one by one because of the limit.').set(Math.max(0, total - leases.length));
  const families: [name: string, help: string, value: (lease: LeaseView) => number | null][] = [
    [
      'leasehold_lease_holder_info',
      'The holder of each lease (empty when none) and its state (held, free, expired, unknown, or stale when its source cannot be read); always 1.',
      () => 1,
    ],
    ['leasehold_lease_remaining_seconds', 'Time left before a held lease expires, by the collector\'s clock; absent when not held, stale or without an expiry.', (l) => seconds(l.remainingMs)],
    ['leasehold_lease_ttl_seconds', 'The TTL of the lease\'s current (or last) grant.', (l) => seconds(l.ttlMs)],
    ['leasehold_lease_token', 'The fencing token of the current grant (a float: exact up to 2^53).', (l) => (l.token === null ? null : Number(l.token))],
    ['leasehold_lease_renewal_margin_seconds', 'Time that was left before the last renewal of the current grant.', (l) => (l.state === 'held' ? seconds(l.lastMarginMs) : null)],
    ['leasehold_lease_changes_of_hands_last_hour', 'Changes of hands (failovers) of the lease in the last hour.', (l) => l.recentTransitions ?? 0],
  ];
  for (const [name, help, value] of families) {
    const info = name === 'leasehold_lease_holder_info';
    const family = gauge(registry, name, help, info ? ['holder', 'lease', 'source', 'state'] : ['lease', 'source']);
    for (const lease of leases) {
      const v = value(lease);
      if (v === null) continue;
      const labels = { lease: lease.id, source: lease.source };
      family.set(info ? { holder: lease.holder ?? '', ...labels, state: lease.stale ? 'stale' : lease.state } : labels, v);
    }
  }
  return registry;
}

const lines = async (registry: Registry) => (await registry.metrics()).trimEnd().split('\n');

/** storeRegistry's series as lines of text. */
export const storeMetrics = async (store: Store): Promise<string[]> => lines(await storeRegistry(store));

/** leaseRegistry's series as lines of text. */
export const leaseMetrics = async (root: LeaseCacheRoot, store: Store, limit: number): Promise<string[]> => lines(await leaseRegistry(root, store, limit));
