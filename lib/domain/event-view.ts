// The one converter of a lease's event to the API's and the stream's shape (LeaseEventView),
// for both ways an event reaches a reader: the collector's change the moment it is written
// (eventFactsOf; published on the live bus) and the store's row (lib/db/lease-views.ts
// eventFactsOfRow). Times are whole milliseconds and tokens decimal text, as the store keeps them.
import { roundMs, wholeMs } from './lease-view';
import type { LeaseChange } from './tracked-lease';
import type { EventType, LeaseEventView } from './types';

export type EventFacts = {
  id: string;
  leaseId: string;
  type: EventType;
  atMs: number;
  holder: string | null;
  previousHolder: string | null;
  token: string | null;
  previousToken: string | null;
  gapMs: number | null;
  detail: unknown;
};

export function toEventView(f: EventFacts): LeaseEventView {
  return {
    id: f.id,
    leaseId: f.leaseId,
    type: f.type,
    at: new Date(wholeMs(f.atMs)!).toISOString(),
    holder: f.holder,
    previousHolder: f.previousHolder,
    token: f.token,
    previousToken: f.previousToken,
    gapMs: roundMs(f.gapMs),
    detail: f.detail,
  };
}

/** A change the collector wrote, with the id the store gave it. */
export function eventFactsOf(id: string, leaseId: string, change: LeaseChange): EventFacts {
  return {
    id,
    leaseId,
    type: change.type,
    atMs: change.atWall,
    holder: change.holder,
    previousHolder: change.previousHolder,
    token: change.token?.toString() ?? null,
    previousToken: change.previousToken?.toString() ?? null,
    gapMs: change.gapMs,
    detail: change.detail,
  };
}
