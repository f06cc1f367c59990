// GET /metrics : Prometheus text format. What this process's collector counts, plus the
// store's view of every source and lease (so a process that only serves the API reports too),
// series per lease up to metrics.leaseSeriesLimit, and each canary's renewals over the last minute, hour and day.
import { Registry } from 'prom-client';
import { metricsRegistry } from '@/lib/metrics';
import { processRoot } from '@/lib/root';
import { errorResponse } from '@/lib/errors';
import { leaseRegistry, storeDownRegistry, storeRegistry } from '@/lib/queries/metrics';
import { canaryRegistry } from '@/lib/queries/canary';
import { requireAccess } from '@/lib/auth/guard';

export const dynamic = 'force-dynamic';

export async function GET(request: Request) {
  try {
    await requireAccess(request, 'GET /metrics');
  } catch (error) {
    return errorResponse(error);
  }
  let fromStore: Registry[];
  try {
    const root = processRoot();
    const store = await root.store();
    fromStore = await Promise.all([storeRegistry(store), leaseRegistry(root, store, root.config.metrics.leaseSeriesLimit), canaryRegistry(store, root.config, Date.now())]);
  } catch {
    fromStore = [storeDownRegistry()];
  }
  const registry = Registry.merge([metricsRegistry(), ...fromStore]);
  return new Response(await registry.metrics(), { headers: { 'Content-Type': registry.contentType, 'Cache-Control': 'no-store' } });
}
