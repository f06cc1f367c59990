import { parseLeaseFilter } from '@/lib/api/params';
import { getConfig } from '@/lib/config';
import { getStore } from '@/lib/db';
import { errorResponse } from '@/lib/errors';
import { listSources } from '@/lib/queries/console';
import { leaseListJson } from '@/lib/queries/lease-cache';

export const dynamic = 'force-dynamic';

/** GET /api/v1/leases?source=&state=&q=&limit= : current leases, and the sources' status. */
export async function GET(request: Request) {
  try {
    const filter = parseLeaseFilter(new URL(request.url).searchParams);
    const store = await getStore();
    const [list, sources] = await Promise.all([leaseListJson(store, filter), listSources(store, getConfig())]);
    // The list arrives as JSON text (lib/queries/lease-cache.ts): assembled, not re-serialized.
    const body = `{"leases":${list.json},"total":${list.total},"truncated":${list.truncated},"sources":${JSON.stringify(sources)}}`;
    return new Response(body, { headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' } });
  } catch (error) {
    return errorResponse(error);
  }
}
