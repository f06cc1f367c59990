// The vocabulary of DESIGN.md section 1, as types. Pure: no I/O, no framework imports
// (enforced by the no-restricted-imports rule in eslint.config.js).

export const BACKENDS = ['postgres', 'redis', 'etcd'] as const;
export type Backend = (typeof BACKENDS)[number];

/** lock: one holder, no queue; election: a leader and ordered candidates; advisory: Postgres advisory lock (session-bound, no TTL). */
export const LEASE_KINDS = ['lock', 'election', 'advisory'] as const;
export type LeaseKind = (typeof LEASE_KINDS)[number];

/** unknown: the source cannot be read, so nothing is claimed about the lease. */
export const LEASE_STATES = ['held', 'free', 'expired', 'unknown'] as const;
export type LeaseState = (typeof LEASE_STATES)[number];

export const EVENT_TYPES = [
  'acquired',
  'renewed',
  'released',
  'expired',
  'taken_over',
  'force_expired',
  'force_released',
  'token_regression',
  'source_down',
  'source_up',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The fencing token: bigint in code, a decimal string on the wire (it may exceed 2^53). */
export type Token = bigint;

export type Candidate = { holder: string; token: string | null };

/** A lease as the API shows it (DESIGN.md section 5). */
export type LeaseView = {
  id: string;
  source: string;
  backend: Backend;
  kind: LeaseKind;
  key: string;
  state: LeaseState;
  holder: string | null;
  token: string | null;
  fenced: boolean;
  ttlMs: number | null;
  remainingMs: number | null;
  acquiredAt: string | null;
  renewedAt: string | null;
  expiresAt: string | null;
  observedAt: string;
  stale: boolean;
  candidates: Candidate[];
  transitions: number;
};

export type LeaseEventView = {
  id: string;
  leaseId: string;
  type: EventType;
  at: string;
  holder: string | null;
  previousHolder: string | null;
  token: string | null;
  previousToken: string | null;
  gapMs: number | null;
  detail: unknown;
};
