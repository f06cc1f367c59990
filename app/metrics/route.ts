// GET /metrics : Prometheus text format. What this process's collector counts, plus the
// store's view of every source and lease (so a process that only serves the API reports too).
import { renderMetrics } from '@/lib/collector/metrics';
import { getStore } from '@/lib/db';
import { storeMetrics } from '@/lib/queries/metrics';

export const dynamic = 'force-dynamic';

export async function GET() {
  let extra: string[];
  try {
    extra = await storeMetrics(await getStore());
  } catch {
    extra = ['# HELP leasehold_store_up 1 when the store answered this scrape.', '# TYPE leasehold_store_up gauge', 'leasehold_store_up 0'];
  }
  return new Response(renderMetrics(extra), { headers: { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8', 'Cache-Control': 'no-store' } });
}
