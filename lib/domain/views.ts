// The collector's side of the API's shapes: what it publishes on the live bus the moment it
// has written a lease or an event. The converters themselves are lease-view.ts and
// event-view.ts, shared with the store's rows (lib/db/lease-views.ts).
import { eventFactsOf, toEventView } from './event-view';
import { leaseFactsOf, toLeaseView } from './lease-view';
import type { LeaseChange, TrackedLease } from './observe';
import type { LeaseEventView, LeaseView } from './types';

/** `nowWall` is this process's wall clock, on which expiresAtWall was computed. */
export function leaseView(lease: TrackedLease, nowWall: number): LeaseView {
  return toLeaseView(leaseFactsOf(lease), { now: nowWall });
}

export function eventView(id: string, leaseId: string, change: LeaseChange): LeaseEventView {
  return toEventView(eventFactsOf(id, leaseId, change));
}
