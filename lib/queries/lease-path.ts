// GET /api/v1/leases/{id}, /events and /renewals: what a lease path (lib/api/params.ts
// parseLeasePath) names, read from the store.
import type { Store } from '../db';
import { leaseIdParam, NotFoundError, type LeasePath } from '../api/params';
import { getLease, leaseFirstSeenAt, leaseRenewals, listLeaseEvents } from './leases';

/**
 * The lease with its 20 latest events and firstSeenAt; or, when the path ends in /events or
 * /renewals and names no lease as a whole, that list of the lease before it. The whole path
 * naming a lease wins. Unknown: NotFoundError (404).
 */
export async function readLeasePath(store: Store, path: LeasePath) {
  const wholeLease = await getLease(store, path.whole);
  if (!wholeLease && path.sub !== null) {
    // "demo/events" may be a whole lease: "demo" not being an id matters only when it is not.
    const leaseId = leaseIdParam(path.prefix);
    if (!(await getLease(store, leaseId))) throw new NotFoundError(`No lease "${leaseId}" is known.`);
    return path.sub === 'events' ? listLeaseEvents(store, leaseId, path.query) : leaseRenewals(store, leaseId, path.since);
  }
  if (!wholeLease) throw new NotFoundError(`No lease "${path.whole}" is known. Lease ids are <source>/<key>; see GET /api/v1/leases.`);
  const [recent, firstSeenAt] = await Promise.all([listLeaseEvents(store, path.whole, { limit: 20 }), leaseFirstSeenAt(store, path.whole)]);
  return { ...wholeLease, firstSeenAt, events: recent.events };
}
