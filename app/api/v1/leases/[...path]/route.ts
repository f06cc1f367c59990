import { parseLeasePath } from '@/lib/api/params';
import { getStore } from '@/lib/db';
import { errorResponse } from '@/lib/errors';
import { readLeasePath } from '@/lib/queries/lease-path';

export const dynamic = 'force-dynamic';

type Params = { params: Promise<{ path: string[] }> };

/**
 * GET /api/v1/leases/{id}            one lease, with its candidates, recent events and firstSeenAt
 * GET /api/v1/leases/{id}/events     its events, newest first (?since=&types=&limit=&cursor=)
 * GET /api/v1/leases/{id}/renewals   raw recent renewals and per-minute rollups (?since=)
 * The id may come percent-encoded as one segment or as plain segments. A key may itself
 * end in "events" or "renewals": the whole path naming a lease wins (its query is checked all the same).
 */
export async function GET(request: Request, { params }: Params) {
  try {
    const path = parseLeasePath((await params).path, new URL(request.url).searchParams);
    return Response.json(await readLeasePath(await getStore(), path), { headers: { 'Cache-Control': 'no-store' } });
  } catch (error) {
    return errorResponse(error);
  }
}
