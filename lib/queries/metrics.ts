import type { Store } from '../db';

const label = (value: string) => value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');

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
