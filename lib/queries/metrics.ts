import { labelKey, labelValue as label } from '../metrics';
import type { Store } from '../db';
import { currentLeases } from './lease-cache';

/** Store-wide series: leases by source and state, sources up or down and who observes them. */
export async function storeMetrics(store: Store): Promise<string[]> {
  const [byState, sources] = await Promise.all([
    store.prisma.lease.groupBy({ by: ['sourceName', 'state', 'stale'], _count: { _all: true } }),
    store.prisma.source.findMany({ select: { name: true, status: true, collectorId: true, lastGoodReadAt: true } }),
  ]);
  const lines = [
    '# HELP leasehold_store_up 1 when the store answered this scrape.',
    '# TYPE leasehold_store_up gauge',
    'leasehold_store_up 1',
    '# HELP leasehold_leases Leases in the store by source and state (stale: its source cannot be read).',
    '# TYPE leasehold_leases gauge',
  ];
  for (const row of byState) {
    lines.push(`leasehold_leases{source="${label(row.sourceName)}",state="${row.stale ? 'stale' : row.state}"} ${row._count._all}`);
  }
  lines.push('# HELP leasehold_source_status 1 when the last read of the source succeeded, as the store records it.', '# TYPE leasehold_source_status gauge');
  for (const source of sources) lines.push(`leasehold_source_status{source="${label(source.name)}"} ${source.status === 'up' ? 1 : 0}`);
  lines.push('# HELP leasehold_source_last_read_timestamp_seconds Time of the last good read of the source.', '# TYPE leasehold_source_last_read_timestamp_seconds gauge');
  for (const source of sources) {
    if (source.lastGoodReadAt) lines.push(`leasehold_source_last_read_timestamp_seconds{source="${label(source.name)}"} ${source.lastGoodReadAt.getTime() / 1000}`);
  }
  lines.push('# HELP leasehold_source_collector The collector that observes each source.', '# TYPE leasehold_source_collector gauge');
  for (const source of sources) {
    if (source.collectorId) lines.push(`leasehold_source_collector{source="${label(source.name)}",collector="${label(source.collectorId)}"} 1`);
  }
  return lines;
}

const seconds = (ms: number) => String(ms / 1000);

/**
 * One set of series per lease, the way kube-state-metrics exposes Kubernetes Lease objects
 * (kube_lease_owner, kube_lease_renew_time), for the first `limit` leases in (source, key)
 * order: so a team's own Prometheus can graph and alert on a lease. Labels: `source`, and
 * `lease`, the lease's id as the API and the console name it (unique, unlike a key cut short).
 * A series is left out where its value is not known (no expiry, no token, no renewal yet).
 * Cost: up to 6 series per lease, and the holder series changes with each change of hands.
 */
export async function leaseMetrics(store: Store, limit: number): Promise<string[]> {
  const { leases, total } = limit > 0 ? await currentLeases(store, limit) : { leases: [], total: 0 };
  const lines = [
    '# HELP leasehold_lease_series_limit Leases exported one by one at most (metrics.leaseSeriesLimit in the config; 0: none).',
    '# TYPE leasehold_lease_series_limit gauge',
    `leasehold_lease_series_limit ${limit}`,
    '# HELP leasehold_lease_series_omitted Leases not exported one by one because of the limit.',
    '# TYPE leasehold_lease_series_omitted gauge',
    `leasehold_lease_series_omitted ${Math.max(0, total - leases.length)}`,
  ];
  const families: [name: string, help: string, value: (lease: (typeof leases)[number]) => string | null][] = [
    [
      'leasehold_lease_holder_info',
      'The holder of each lease (empty when none) and its state (held, free, expired, unknown, or stale when its source cannot be read); always 1.',
      () => '1',
    ],
    ['leasehold_lease_remaining_seconds', 'Time left before a held lease expires, by the collector\'s clock; absent when not held, stale or without an expiry.', (l) => (l.remainingMs === null ? null : seconds(l.remainingMs))],
    ['leasehold_lease_ttl_seconds', 'The TTL of the lease\'s current (or last) grant.', (l) => (l.ttlMs === null ? null : seconds(l.ttlMs))],
    ['leasehold_lease_token', 'The fencing token of the current grant (a float: exact up to 2^53).', (l) => l.token],
    ['leasehold_lease_renewal_margin_seconds', 'Time that was left before the last renewal of the current grant.', (l) => (l.state === 'held' && l.lastMarginMs !== null ? seconds(l.lastMarginMs) : null)],
    ['leasehold_lease_changes_of_hands_last_hour', 'Changes of hands (failovers) of the lease in the last hour.', (l) => String(l.recentTransitions ?? 0)],
  ];
  for (const [name, help, value] of families) {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`);
    for (const lease of leases) {
      const v = value(lease);
      if (v === null) continue;
      const labels: Record<string, string> = { source: lease.source, lease: lease.id };
      if (name === 'leasehold_lease_holder_info') Object.assign(labels, { holder: lease.holder ?? '', state: lease.stale ? 'stale' : lease.state });
      lines.push(`${name}{${labelKey(labels)}} ${v}`);
    }
  }
  return lines;
}
