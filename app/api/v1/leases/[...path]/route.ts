import { NotFoundError, parseCursor, parseLimit, parseSince, parseTypes } from '@/lib/api/params';
import { getStore } from '@/lib/db';
import { formatLeaseId, leaseIdFromSegments } from '@/lib/domain/lease-id';
import { errorResponse } from '@/lib/errors';
import { getLease, leaseRenewals, listLeaseEvents } from '@/lib/queries/leases';

export const dynamic = 'force-dynamic';

type Params = { params: Promise<{ path: string[] }> };

/**
 * GET /api/v1/leases/{id}            one lease, with its candidates and recent events
 * GET /api/v1/leases/{id}/events     its events, newest first (?since=&types=&limit=&cursor=)
 * GET /api/v1/leases/{id}/renewals   raw recent renewals and per-minute rollups (?since=)
 * The id may come percent-encoded as one segment or as plain segments. A key may itself
 * end in "events" or "renewals": the whole path naming a lease wins.
 */
export async function GET(request: Request, { params }: Params) {
  try {
    const segments = (await params).path;
    const search = new URL(request.url).searchParams;
    const store = await getStore();
    const whole = formatLeaseId(leaseIdFromSegments(segments));
    const wholeLease = await getLease(store, whole);
    const last = segments.at(-1);
    if (!wholeLease && segments.length > 1 && (last === 'events' || last === 'renewals')) {
      const id = formatLeaseId(leaseIdFromSegments(segments.slice(0, -1)));
      if (!(await getLease(store, id))) throw new NotFoundError(`No lease "${id}" is known.`);
      if (last === 'events') {
        const page = await listLeaseEvents(store, id, {
          since: parseSince(search),
          types: parseTypes(search),
          before: parseCursor(search),
          limit: parseLimit(search, 100, 1_000),
        });
        return Response.json(page, { headers: { 'Cache-Control': 'no-store' } });
      }
      return Response.json(await leaseRenewals(store, id, parseSince(search)), { headers: { 'Cache-Control': 'no-store' } });
    }
    if (!wholeLease) throw new NotFoundError(`No lease "${whole}" is known. Lease ids are <source>/<key>; see GET /api/v1/leases.`);
    const recent = await listLeaseEvents(store, whole, { limit: 20 });
    return Response.json({ ...wholeLease, events: recent.events }, { headers: { 'Cache-Control': 'no-store' } });
  } catch (error) {
    return errorResponse(error);
  }
}
