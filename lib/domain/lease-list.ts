// The live stream's messages applied to a list of leases: one rule for the server's list
// cache (lib/queries/lease-cache.ts) and the browser's live stream
// (components/live/live-stream.tsx). Pure: no I/O, no clock.
//
// - A lease message is the lease as it is now: it replaces the listed one, or joins the list.
// - An event counts towards the lease's changes of hands only when it is one
//   (isChangeOfHands: a first sighting, a renewal or a release is not).
// - A source's change of status marks its leases stale (down) or not (up), as the store does
//   in the same write: a stale lease has no countdown. A status of "unknown" says nothing.
import { isChangeOfHands } from './health';
import type { LeaseEventView } from './types';

/** What the reducer needs of a listed lease; the server and the browser each keep more. */
export type ListedLease = {
  id: string;
  source: string;
  stale: boolean;
  observedAt: string;
  remainingMs: number | null;
  recentTransitions: number | null;
};

export type ListMessage<L extends ListedLease> =
  | { type: 'lease'; lease: L }
  | { type: 'event'; event: Pick<LeaseEventView, 'leaseId' | 'at' | 'type' | 'holder' | 'previousHolder' | 'detail'> }
  | { type: 'source'; source: { name: string; status: string } };

/** What one message does to the list. */
export type ListChange<L extends ListedLease> =
  | { kind: 'replace'; lease: L }
  | { kind: 'change_of_hands'; leaseId: string; atMs: number }
  | { kind: 'source_status'; source: string; stale: boolean }
  | { kind: 'none' };

export function listChangeOf<L extends ListedLease>(message: ListMessage<L>): ListChange<L> {
  switch (message.type) {
    case 'lease':
      return { kind: 'replace', lease: message.lease };
    case 'event':
      return isChangeOfHands(message.event) ? { kind: 'change_of_hands', leaseId: message.event.leaseId, atMs: Date.parse(message.event.at) } : { kind: 'none' };
    case 'source':
      return message.source.status === 'up' || message.source.status === 'down' ? { kind: 'source_status', source: message.source.name, stale: message.source.status === 'down' } : { kind: 'none' };
  }
}

export type ApplyOptions = {
  /** Keep a listed lease whose picture is newer than the message's (a list fetched after the message was sent). */
  onlyNewer?: boolean;
};

/** One lease with a change applied: the same object when it changes nothing; undefined for a lease not listed that the change does not add. */
export function applyToLease<L extends ListedLease>(lease: L | undefined, change: ListChange<L>, options: ApplyOptions = {}): L | undefined {
  switch (change.kind) {
    case 'replace':
      if (lease && options.onlyNewer && lease.observedAt > change.lease.observedAt) return lease;
      // A live update does not count changes of hands (null): the list's count stands, and a
      // lease that joins the list has had none the list knows of.
      return change.lease.recentTransitions === null ? { ...change.lease, recentTransitions: lease ? lease.recentTransitions : 0 } : change.lease;
    case 'change_of_hands':
      return lease && lease.id === change.leaseId ? { ...lease, recentTransitions: (lease.recentTransitions ?? 0) + 1 } : lease;
    case 'source_status':
      return lease && lease.source === change.source ? withStale(lease, change.stale) : lease;
    case 'none':
      return lease;
  }
}

/** Whether a lease counts down: countdown.ts (here too, for the list's readers). */
export { hasCountdown } from './countdown';

/** The lease marked stale (its source cannot be read: no countdown) or not. */
export function withStale<L extends ListedLease>(lease: L, stale: boolean): L {
  return lease.stale === stale ? lease : { ...lease, stale, remainingMs: stale ? null : lease.remainingMs };
}

/**
 * The list with the messages applied in order: the same array when nothing in it changed
 * (most of a second's messages only move sources' last reads), so nothing that depends on its
 * identity (the overview's order of 10,000 rows) is worked out again.
 */
export function reduceLeaseList<L extends ListedLease>(list: readonly L[], messages: Iterable<ListMessage<L>>, options: ApplyOptions = {}): readonly L[] {
  let next: L[] | null = null;
  let index: Map<string, number> | null = null;
  const indexOf = (id: string) => {
    index ??= new Map(list.map((lease, i) => [lease.id, i]));
    return index.get(id);
  };
  const put = (at: number | undefined, lease: L) => {
    next ??= [...list];
    if (at === undefined) {
      index!.set(lease.id, next.length);
      next.push(lease);
    } else next[at] = lease;
  };
  for (const message of messages) {
    const change = listChangeOf(message);
    if (change.kind === 'none') continue;
    if (change.kind === 'source_status') {
      const current: readonly L[] = next ?? list;
      for (let i = 0; i < current.length; i++) {
        const marked = applyToLease(current[i], change, options)!;
        if (marked !== current[i]) put(i, marked);
      }
      continue;
    }
    const id = change.kind === 'replace' ? change.lease.id : change.leaseId;
    const at = indexOf(id);
    const current = at === undefined ? undefined : (next ?? list)[at];
    const updated = applyToLease(current, change, options);
    if (updated && updated !== current) put(at, updated);
  }
  return next ?? list;
}
