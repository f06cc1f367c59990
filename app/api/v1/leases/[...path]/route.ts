import { leaseIdParam, NotFoundError, parseCursor, parseLimit, parseSince, parseTypes } from '@/lib/api/params';
import { getStore } from '@/lib/db';
import { errorResponse } from '@/lib/errors';
import { getLease, leaseFirstSeenAt, leaseRenewals, listLeaseEvents } from '@/lib/queries/leases';

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
    const segments = (await params).path;
    const search = new URL(request.url).searchParams;
    // Checked before the store is asked, so that a bad value is a 400 naming it: the id (a
    // control character, over-long) and the query of /events or /renewals.
    const whole = leaseIdParam(segments);
    const last = segments.length > 1 ? segments.at(-1) : undefined;
    const sub = last === 'events' || last === 'renewals' ? last : null;
    // "demo/events" may be a whole lease: "demo" not being an id matters only when it is not.
    const id = sub ? () => leaseIdParam(segments.slice(0, -1)) : null;
    const events = sub === 'events' ? { since: parseSince(search), types: parseTypes(search), before: parseCursor(search), limit: parseLimit(search, 100, 1_000) } : null;
    const since = sub === 'renewals' ? parseSince(search) : undefined;
    const store = await getStore();
    const wholeLease = await getLease(store, whole);
    if (!wholeLease && id !== null) {
      const leaseId = id();
      if (!(await getLease(store, leaseId))) throw new NotFoundError(`No lease "${leaseId}" is known.`);
      if (events) return Response.json(await listLeaseEvents(store, leaseId, events), { headers: { 'Cache-Control': 'no-store' } });
      return Response.json(await leaseRenewals(store, leaseId, since), { headers: { 'Cache-Control': 'no-store' } });
    }
    if (!wholeLease) throw new NotFoundError(`No lease "${whole}" is known. Lease ids are <source>/<key>; see GET /api/v1/leases.`);
    const [recent, firstSeenAt] = await Promise.all([listLeaseEvents(store, whole, { limit: 20 }), leaseFirstSeenAt(store, whole)]);
    return Response.json({ ...wholeLease, firstSeenAt, events: recent.events }, { headers: { 'Cache-Control': 'no-store' } });
  } catch (error) {
    return errorResponse(error);
  }
}
