import { parseQuery } from '@/lib/api/params';
import { failoversQuery } from '@/lib/api/query-schemas';
import { getStore } from '@/lib/root';
import { errorResponse } from '@/lib/errors';
import { listFailovers } from '@/lib/queries/leases';
import { requireAccess } from '@/lib/auth/guard';
import { reply } from '@/lib/api/reply';
import { failoverPageSchema } from '@/lib/domain/schemas';

export const dynamic = 'force-dynamic';

/** GET /api/v1/failovers?since=&limit=&cursor= : every change of holder, newest first, with its gap and cause. */
export async function GET(request: Request) {
  try {
    await requireAccess(request, 'GET /api/v1/failovers');
    const query = parseQuery(failoversQuery, new URL(request.url).searchParams);
    const page = await listFailovers(await getStore(), query);
    return reply(failoverPageSchema, page);
  } catch (error) {
    return errorResponse(error);
  }
}
