import { getConfig } from '@/lib/root';
import { getStore } from '@/lib/root';
import { errorResponse } from '@/lib/errors';
import { listSources } from '@/lib/queries/console';
import { requireAccess } from '@/lib/auth/guard';
import { reply } from '@/lib/api/reply';
import { sourcesSchema } from '@/lib/domain/schemas';

export const dynamic = 'force-dynamic';

/** GET /api/v1/sources : every source with its health and, for etcd, the cluster's leader, Raft term and members. */
export async function GET(request: Request) {
  try {
    await requireAccess(request, 'GET /api/v1/sources');
    return reply(sourcesSchema, { sources: await listSources(await getStore(), getConfig()) });
  } catch (error) {
    return errorResponse(error);
  }
}
