import { parseLeaseFilter } from '@/lib/api/params';
import { getConfig } from '@/lib/config';
import { getStore } from '@/lib/db';
import { errorResponse } from '@/lib/errors';
import { listSources } from '@/lib/queries/console';
import { listLeases } from '@/lib/queries/leases';

export const dynamic = 'force-dynamic';

/** GET /api/v1/leases?source=&state=&q=&limit= : current leases, and the sources' status. */
export async function GET(request: Request) {
  try {
    const filter = parseLeaseFilter(new URL(request.url).searchParams);
    const store = await getStore();
    const [list, sources] = await Promise.all([listLeases(store, filter), listSources(store, getConfig())]);
    return Response.json(
      { leases: list.leases, total: list.total, truncated: list.truncated, sources },
      { headers: { 'Cache-Control': 'no-store' } },
    );
  } catch (error) {
    return errorResponse(error);
  }
}
