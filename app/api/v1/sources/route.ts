import { getConfig } from '@/lib/root';
import { getStore } from '@/lib/root';
import { errorResponse } from '@/lib/errors';
import { listSources } from '@/lib/queries/console';
import { canaryViews } from '@/lib/queries/canary';
import { requireAccess } from '@/lib/auth/guard';
import { reply } from '@/lib/api/reply';
import { sourcesSchema } from '@/lib/domain/schemas';

export const dynamic = 'force-dynamic';

/** GET /api/v1/sources : every source with its health, for etcd the cluster's leader, Raft term and members, and its canary's round trips. */
export async function GET(request: Request) {
  try {
    await requireAccess(request, 'GET /api/v1/sources');
    const store = await getStore();
    const config = getConfig();
    const [sources, canaries] = await Promise.all([listSources(store, config), canaryViews(store, config, Date.now())]);
    return reply(sourcesSchema, { sources: sources.map((source) => ({ ...source, canary: canaries.get(source.name) ?? null })) });
  } catch (error) {
    return errorResponse(error);
  }
}
