// GET /metrics : Prometheus text format. What this process's collector counts, plus the
// store's view of every source and lease (so a process that only serves the API reports too),
// and series per lease up to metrics.leaseSeriesLimit.
import { renderMetrics } from '@/lib/metrics';
import { getConfig } from '@/lib/config';
import { getStore } from '@/lib/db';
import { leaseMetrics, storeMetrics } from '@/lib/queries/metrics';

export const dynamic = 'force-dynamic';

export async function GET() {
  let extra: string[];
  try {
    const store = await getStore();
    const [sources, leases] = await Promise.all([storeMetrics(store), leaseMetrics(store, getConfig().metrics.leaseSeriesLimit)]);
    extra = [...sources, ...leases];
  } catch {
    extra = ['# HELP leasehold_store_up 1 when the store answered this scrape.', '# TYPE leasehold_store_up gauge', 'leasehold_store_up 0'];
  }
  return new Response(renderMetrics(extra), { headers: { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8', 'Cache-Control': 'no-store' } });
}
