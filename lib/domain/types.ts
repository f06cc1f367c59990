// The vocabulary of leases (docs/architecture.md, docs/api.md), as types. Pure: no I/O, no framework imports
// (enforced by the no-restricted-imports rule in eslint.config.js).
import { FORCE_EVENT_TYPES } from './admin-actions';

/**
 * A backend kind's name, as its descriptor registers it (lib/sources/backends.ts): the domain
 * takes every kind alike, so a new one needs nothing here.
 */
export type Backend = string;

/** What a backend kind's name may look like: lower-case letters, digits and dashes. */
export const BACKEND_NAME = /^[a-z][a-z0-9-]{0,31}$/;

/** lock: one holder, no queue; election: a leader and ordered candidates; advisory: Postgres advisory lock (session-bound, no TTL). */
export const LEASE_KINDS = ['lock', 'election', 'advisory'] as const;
export type LeaseKind = (typeof LEASE_KINDS)[number];

/**
 * held: someone holds it; free: released (or never held); expired: its holder let it run out;
 * unknown: the backend holds something Leasehold cannot interpret (a malformed value), so
 * nothing is claimed. A lease of a source that cannot be read keeps its last known state
 * and is marked `stale` instead.
 */
export const LEASE_STATES = ['held', 'free', 'expired', 'unknown'] as const;
export type LeaseState = (typeof LEASE_STATES)[number];

export const EVENT_TYPES = [
  'acquired',
  'renewed',
  'released',
  'expired',
  'taken_over',
  // The admin actions' events, one per row of lib/domain/admin-actions.ts.
  ...FORCE_EVENT_TYPES,
  'token_regression',
  'source_down',
  'source_up',
  // The state changed while Leasehold could not watch (source outage, etcd compaction,
  // another collector's handover): before and after are known, what happened between is not.
  'observation_gap',
  // Grants that came and went between two reads, proven by a counter raised only by grants
  // (a Redis fence): how many and their tokens, not who held them (unseen-grants.ts).
  'unseen_grants',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * The types a lease's own event list can hold today, in the order filters offer them:
 * renewals are kept as renewal samples, source_down and source_up as the source's events, and
 * the forced types come with the admin actions. A filter offers only these.
 */
export const LEASE_EVENT_TYPES = ['acquired', 'released', 'expired', 'taken_over', 'unseen_grants', 'token_regression', 'observation_gap'] as const satisfies readonly EventType[];

/** The fencing token: bigint in code, a decimal string on the wire (it may exceed 2^53). */
export type Token = bigint;

/**
 * The API's shapes (docs/api.md): a candidate or waiter behind the holder,
 * a lease, an event. Inferred from their zod schemas (schemas/lease.ts), the one place they are written.
 */
export type { Candidate, LeaseEventView, LeaseView } from './schemas/lease';
