// What the observer knows of one lease between reads (TrackedLease), and what a read can
// produce from it: changes (events) and renewals.
import type { Backend, EventType, LeaseKind, LeaseState } from './types';

export type TrackedLease = {
  id: string;
  source: string;
  backend: Backend;
  kind: LeaseKind;
  key: string;
  state: LeaseState;
  holder: string | null;
  token: bigint | null;
  lastHolder: string | null;
  lastToken: bigint | null;
  ttlMs: number | null;
  /** Estimated expiry on the observer's monotonic clock; null without a TTL. */
  expiresAtMono: number | null;
  /** How late the real expiry may be compared with the estimate (the read's duration plus the backend's precision). */
  expiryUncertaintyMs: number;
  expiresAtWall: number | null;
  /** When the current grant began (estimated), wall clock. */
  acquiredAtWall: number | null;
  /** When it was last renewed (estimated), wall clock; null before the first renewal. */
  renewedAtWall: number | null;
  /** Estimated time of the grant or last renewal, monotonic: the start of the next interval. */
  lastRenewalMono: number | null;
  observedAtMono: number;
  observedAtWall: number;
  stale: boolean;
  candidates: { holder: string; token: bigint | null }[];
  transitions: number;
  /** How the last grant ended, for pairing it with the next acquisition into a failover. */
  ended: { holder: string; token: bigint | null; atMono: number; atWall: number; cause: 'expired' | 'released' } | null;
  problem: string | null;
  detail: Record<string, unknown> | null;
  /** Sequence of the last event of this lease (events are unique per lease and sequence). */
  eventSeq: number;
  /** Sequence of the last renewal (the raw-renewal ring's slot is this modulo its size). */
  renewalSeq: number;
  /** Grows with every new picture of the lease, so a write never replaces a newer one. */
  version: number;
  /** The current grant's last renewal: how long after the one before, and how much time was left. */
  lastRenewal: { intervalMs: number; marginMs: number } | null;
};

export type LeaseChange = {
  type: EventType;
  atWall: number;
  holder: string | null;
  previousHolder: string | null;
  token: bigint | null;
  previousToken: bigint | null;
  gapMs: number | null;
  detail: Record<string, unknown> | null;
};

export type Renewal = {
  atWall: number;
  holder: string;
  /** Since the previous renewal or the grant. */
  intervalMs: number;
  /** Time that was left just before the renewal. */
  marginMs: number;
  /**
   * How much more than marginMs may have been left: the last expiry estimate's own uncertainty,
   * plus, when the renewal can only be dated by the read that saw it (no TTL to date it by),
   * the time since the read before. A renewal is late only when it surely was.
   */
  marginUncertaintyMs: number;
  ttlMs: number | null;
};

export type DiffResult = {
  next: TrackedLease | undefined;
  changes: LeaseChange[];
  renewal: Renewal | null;
};

/** Extra slack for timing noise beyond an observation's own precision. */
export const TIMING_SLACK_MS = 5;

/**
 * What a reading of the same grant (not renewed beyond noise) says of its expiry, with what
 * was known. Each estimate is the earliest the expiry can be, so the later of the two is too
 * (etcd's whole seconds give a new bound at every reading); how late it may be is this
 * reading's own bound, since an unseen renewal may have moved it past the last one's. A reading
 * that cannot be squared with the last (the expiry moved back: a holder renewed with a shorter
 * TTL) is taken as it is.
 */
export function narrowedExpiry(prev: Pick<TrackedLease, 'expiresAtMono'>, expiry: number, uncertainty: number): { expiresAtMono: number; expiryUncertaintyMs: number } {
  const latest = expiry + uncertainty;
  // Within timing noise of this reading's latest, the last estimate still stands.
  const earliest = prev.expiresAtMono !== null && prev.expiresAtMono <= latest + TIMING_SLACK_MS ? Math.max(prev.expiresAtMono, expiry) : expiry;
  return { expiresAtMono: earliest, expiryUncertaintyMs: Math.max(0, latest - earliest) };
}

/** A lease seen for the first time, before the read that found it is applied. */
export function newTrackedLease(read: { source: string; backend: Backend; startedMono: number; startedWall: number }, kind: LeaseKind, key: string): TrackedLease {
  return {
    id: leaseIdOf(read.source, key),
    source: read.source,
    backend: read.backend,
    kind,
    key,
    state: 'free',
    holder: null,
    token: null,
    lastHolder: null,
    lastToken: null,
    ttlMs: null,
    expiresAtMono: null,
    expiryUncertaintyMs: 0,
    expiresAtWall: null,
    acquiredAtWall: null,
    renewedAtWall: null,
    lastRenewalMono: null,
    observedAtMono: read.startedMono,
    observedAtWall: read.startedWall,
    stale: false,
    candidates: [],
    transitions: 0,
    ended: null,
    problem: null,
    detail: null,
    eventSeq: 0,
    renewalSeq: 0,
    version: 0,
    lastRenewal: null,
  };
}

export function leaseIdOf(source: string, key: string): string {
  return `${source}/${key}`;
}

/** Marks every lease of a source that could not be read: nothing is claimed, nothing is invented. */
export function markStale(lease: TrackedLease): TrackedLease {
  return lease.stale ? lease : { ...lease, stale: true };
}
