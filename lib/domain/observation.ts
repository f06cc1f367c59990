// What one read of a lease says on its own: the adapters' Observation, the circumstances of
// the read, and the bounds every number a backend reports is kept within before it is judged.
import type { Backend, LeaseKind, LeaseState } from './types';

/** One lease as an adapter read it. Values are already display-safe. */
export type Observation = {
  key: string;
  kind: LeaseKind;
  /** Who holds it, or null when nobody does. */
  holder: string | null;
  token: bigint | null;
  /** The granted duration, when the backend records it. */
  ttlMs: number | null;
  /** Time left as the backend reported it during the read; null when it keeps no TTL (advisory locks) or it is not known yet. */
  remainingMs: number | null;
  /** How coarse remainingMs is (etcd reports whole seconds). */
  precisionMs?: number;
  /** The backend marks the lease explicitly released (a free row), as opposed to expired. */
  released?: boolean;
  candidates: { holder: string; token: bigint | null }[];
  detail?: Record<string, unknown>;
  /** Set when the backend holds something that cannot be interpreted: the state is unknown. */
  problem?: string;
  /**
   * The highest token the backend has handed out for this key, when it keeps a counter that
   * is raised at each grant and only then (a Redis fence counter): tokens between the last
   * one accounted for and this one were grants that came and went between two reads
   * (unseen-grants.ts).
   */
  issued?: bigint;
  /**
   * The key itself is not there: this observation carries only what the backend still knows
   * of it (its counter). Judged as gone; it never makes a lease the collector did not know.
   */
  gone?: true;
};

/** What a source reports for a lease it found but cannot interpret: state `unknown`, with why. */
export function unreadableObservation(key: string, problem: string, extra: Pick<Observation, 'kind' | 'detail'> = { kind: 'lock' }): Observation {
  return { key, kind: extra.kind, holder: null, token: null, ttlMs: null, remainingMs: null, candidates: [], problem, ...(extra.detail ? { detail: extra.detail } : {}) };
}

/** The circumstances of one read. */
export type ReadContext = {
  source: string;
  backend: Backend;
  /** Observer monotonic time (ms) when the read started. */
  startedMono: number;
  /** Wall clock (epoch ms) at the same moment, for the timestamps people read. */
  startedWall: number;
  /**
   * Observer monotonic time when the read finished. The backend measured each remaining
   * time somewhere between start and finish, so their difference bounds how wrong an
   * expiry estimate can be (default: no uncertainty).
   */
  finishedMono?: number;
  /** The collector could not watch before this read (outage, compaction, handover). */
  afterGap: boolean;
};

/**
 * Backends hold durations no date can show: Redis takes a PX of 2^63 ms, a lease table an
 * expiry of 294276 AD or 4000 BC. Remaining times and TTLs are kept within ±MAX_DURATION_MS
 * (about 27,000 years) and wall times between the years 1 and 9999, which every store column,
 * JavaScript Date and ISO text can hold; a lease whose numbers were cut says so in its detail.
 */
export const MAX_DURATION_MS = 864_000_000_000_000;
export const MIN_WALL_MS = -62_135_596_800_000; // 0001-01-01T00:00:00.000Z
export const MAX_WALL_MS = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z

/** A wall time within the years 1 and 9999. */
export const clampWall = (ms: number) => Math.min(MAX_WALL_MS, Math.max(MIN_WALL_MS, ms));

/** The most candidates kept of one lease's queue (the next ones in line). */
export const MAX_CANDIDATES = 100;

/**
 * The observation with its numbers inside the bounds above, or with a problem when one is not
 * a number at all. What was cut is named in detail.clamped, the same way at every read, so a
 * lease whose TTL is forty thousand years is still "unchanged" from one read to the next: a
 * remaining time beyond MAX_DURATION_MS is no expiry at all (held until deleted, as a Redis key
 * without one), since an expiry estimate moved along with the clock would look like a renewal
 * at every read. Applying it twice changes nothing.
 */
export function boundObservation(o: Observation, startedWall: number): Observation {
  if (o.detail && 'clamped' in o.detail) return o;
  for (const field of ['remainingMs', 'ttlMs', 'precisionMs'] as const) {
    const value = o[field];
    if (typeof value === 'number' && Number.isNaN(value)) return { ...o, problem: o.problem ?? `the backend reported a ${field} that is not a number` };
  }
  const clamped: string[] = [];
  let { remainingMs, ttlMs } = o;
  if (remainingMs !== null && remainingMs > MAX_DURATION_MS) {
    remainingMs = null;
    clamped.push('it expires more than 27,000 years from now: shown as held with no expiry');
  } else if (remainingMs !== null && remainingMs < -MAX_DURATION_MS) {
    remainingMs = -MAX_DURATION_MS;
    clamped.push('it expired more than 27,000 years ago');
  }
  if (ttlMs !== null && !(ttlMs >= 0 && ttlMs <= MAX_DURATION_MS)) {
    ttlMs = ttlMs > MAX_DURATION_MS ? MAX_DURATION_MS : null;
    clamped.push(ttlMs === null ? 'its TTL is negative: not shown' : 'its TTL is beyond 27,000 years: shown as 27,000 years');
  }
  if (remainingMs !== null && clampWall(startedWall + remainingMs) !== startedWall + remainingMs) {
    clamped.push(remainingMs > 0 ? 'its expiry is after 9999-12-31: shown as 9999-12-31' : 'its expiry is before the year 1: shown as 0001-01-01');
  }
  let { candidates } = o;
  if (candidates.length > MAX_CANDIDATES) {
    // Each is up to a kilobyte of holder text, written with the lease and sent to every
    // stream: a queue of thousands is summed up, not carried.
    candidates = candidates.slice(0, MAX_CANDIDATES);
    clamped.push(`${o.candidates.length} candidates are queued: the first ${MAX_CANDIDATES} are shown`);
  }
  if (clamped.length === 0) return o;
  return { ...o, remainingMs, ttlMs, candidates, detail: { ...(o.detail ?? {}), clamped: clamped.join('; ') } };
}

/** Held by someone, readable, and not run out (as far as the backend said). */
export const isHeld = (o: Observation | undefined): o is Observation & { holder: string } =>
  o !== undefined && o.holder !== null && !o.problem && (o.remainingMs === null || o.remainingMs > 0);

/** The state one read shows on its own, without history (for `leasehold snapshot`). */
export function stateOf(observation: Observation): LeaseState {
  if (observation.problem) return 'unknown';
  if (isHeld(observation)) return 'held';
  return observation.holder !== null && !observation.released ? 'expired' : 'free';
}

