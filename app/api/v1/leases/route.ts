import { parseQuery } from '@/lib/api/params';
import { leasesQuery } from '@/lib/api/query-schemas';
import { processRoot } from '@/lib/root';
import { errorResponse } from '@/lib/errors';
import { leaseListReply } from '@/lib/queries/lease-list-reply';
import { requireAccess } from '@/lib/auth/guard';
import { checkReplyBytes } from '@/lib/api/reply';
import { leaseListSchema } from '@/lib/domain/schemas';

export const dynamic = 'force-dynamic';

/**
 * GET /api/v1/leases?source=&state=&q=&sort=&limit=&cursor= : a page of the current leases, and the sources' status (docs/api.md, "Paging").
 * `position` is the live stream's position the list is current to: GET /api/v1/stream?after=
 * with it sends exactly the changes since.
 */
export async function GET(request: Request) {
  const started = performance.now();
  try {
    await requireAccess(request, 'GET /api/v1/leases');
    const filter = parseQuery(leasesQuery, new URL(request.url).searchParams);
    const reply = await leaseListReply(processRoot(), filter, started);
    // Its answer, declared: assembled as bytes around the list's (lib/queries/lease-list-reply.ts), checked as they are.
    checkReplyBytes(leaseListSchema, reply.body);
    return new Response(reply.body, {
      headers: {
        'Content-Type': 'application/json',
        // no-transform: sent as it is. Gzip of 10,000 leases (5 MB) costs this server about 60 ms of CPU
        // per request, more than everything else; a compressing proxy in front does it instead (README, "Deploying").
        'Cache-Control': 'no-store, no-transform',
        // How long assembling the answer took here, apart from sending it (visible in devtools).
        'Server-Timing': `app;dur=${(performance.now() - started).toFixed(1)}, list;dur=${reply.listMs.toFixed(1)}, sources;dur=${reply.sourcesMs.toFixed(1)}`,
      },
    });
  } catch (error) {
    return errorResponse(error);
  }
}
