import { parseCursor, parseLimit, parseSince } from '@/lib/api/params';
import { getStore } from '@/lib/db';
import { errorResponse } from '@/lib/errors';
import { listFailovers } from '@/lib/queries/leases';

export const dynamic = 'force-dynamic';

/** GET /api/v1/failovers?since=&limit=&cursor= : every change of holder, newest first, with its gap and cause. */
export async function GET(request: Request) {
  try {
    const search = new URL(request.url).searchParams;
    const options = { since: parseSince(search), limit: parseLimit(search, 200, 5_000), before: parseCursor(search) };
    const page = await listFailovers(await getStore(), options);
    return Response.json(page, { headers: { 'Cache-Control': 'no-store' } });
  } catch (error) {
    return errorResponse(error);
  }
}
