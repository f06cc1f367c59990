// What TTL readings of one etcd lease prove about its expiry (pure; times are ms on the
// collector's monotonic clock).
//
// etcd answers LeaseTimeToLive with the seconds left, truncated: a reading v ≥ 1 taken when
// the lease's expiry was E means v ≤ E − t < v + 1 s; a reading 0 means −1 s < E − t < 1 s:
// less than a second left, or run out less than a second ago and not yet revoked (the leader's
// lessor revokes expired leases every 500 ms); -1 means gone. A keepalive (or a new leader's
// lessor, which extends every lease) sets E to at least its own moment + the granted TTL; E
// never moves back.
//
// So one reading of 0 proves nothing, but two do. Readings b and c, both 0, where c started
// at least 1 s after b finished and finished within the granted TTL − 1 s of b's start:
//   - at b, E < t_b + 1 s ≤ t_c;
//   - a keepalive between them would have left at least (granted − (t_c − t_b)) > 1 s at c,
//     and c would have read 1 or more;
// so E did not move between them and had passed when c was read: the lease ran out, by
// b's finish + 1 s at the latest. It needs a granted TTL of 3 s or more (etcd's smallest is
// 2 s, and then the two conditions leave no room for a round trip).
//
// The readings that make the proof quick: from the earliest moment the 1 → 0 step can come
// (the earliest expiry − 1 s) the lease is read every few tens of ms; b is the first 0, just
// after E − 1 s; c one second after b, just after E.
//
// A lease that is gone proves nothing about how it ended: revoked by its holder (a release) or
// by the lessor (run out) read the same, -1. What the readings give a release is the earliest
// expiry, kept current: a lease gone before that moment was released (lib/domain/transition.ts).
// With a granted TTL under 3 s no proof can be made, but the earliest expiry still has to be
// known to better than the time between renewals, or a release just before the next renewal
// looks like an expiry: such a lease is read every SHORT_TTL_EVERY of (granted − 1 s).

/** Between b and c: a second on etcd's clock, plus a little for the two clocks' rates. */
const SECOND_MS = 1_000;
const RATE_MARGIN_MS = 10;
/** The smallest granted TTL a proof can be made for. */
export const MIN_PROVABLE_TTL_MS = 3_000;
/** A lease whose TTL is too short for a proof is read every this much of (granted − 1 s). */
const SHORT_TTL_EVERY = 0.5;

export type TtlReading = {
  /** The remaining time etcd reported (whole seconds, as ms): at least this much was left at `readAt`. */
  remainingMs: number;
  /** The lease's granted TTL. */
  ttlMs: number;
  /** When the reading's answer arrived. */
  readAt: number;
  /** The earliest the lease's expiry can be, from every reading so far (it only rises). */
  earliestEnd: number;
  /** The reading of 0 that a later one can complete a proof with (b above), if any. */
  zero: { startedAt: number; finishedAt: number } | null;
  /** Proven run out: it ran out at or before this moment. */
  ranOutBy: number | null;
} | null;

/** The picture after a reading of `seconds` (etcd's TTL, -1 when gone) made between startedAt and finishedAt. */
export function nextReading(prev: TtlReading | undefined, seconds: number, grantedMs: number, startedAt: number, finishedAt: number): TtlReading {
  if (seconds < 0) return null;
  const earliestSoFar = prev?.earliestEnd ?? -Infinity;
  const base = { remainingMs: seconds * SECOND_MS, ttlMs: grantedMs, readAt: finishedAt };
  if (prev?.ranOutBy != null) {
    // A proven expiry stands: etcd does not renew a lease that ran out (a keepalive then waits
    // for its revocation). A reading made before it ran out (a slow one, answered late) says
    // nothing new; only a new leader's lessor, which extends every lease, can show it alive again.
    if (seconds === 0) return { ...prev, ...base };
    if (startedAt < prev.ranOutBy) return prev;
  }
  if (seconds >= 1) return { ...base, earliestEnd: Math.max(earliestSoFar, startedAt + seconds * SECOND_MS), zero: null, ranOutBy: null };
  const earliestEnd = Math.max(earliestSoFar, startedAt - SECOND_MS);
  const b = prev?.zero;
  if (b && startedAt >= b.finishedAt + SECOND_MS + RATE_MARGIN_MS && finishedAt - b.startedAt <= grantedMs - SECOND_MS - RATE_MARGIN_MS) {
    return { ...base, earliestEnd, zero: b, ranOutBy: b.finishedAt + SECOND_MS };
  }
  // The earlier 0 is kept while this one came too soon to complete it; one too old to complete is replaced.
  const zero = b && startedAt < b.finishedAt + SECOND_MS + RATE_MARGIN_MS ? b : { startedAt, finishedAt };
  return { ...base, earliestEnd, zero, ranOutBy: null };
}

/**
 * When the lease should next be read to prove, quickly, that it ran out if it does: null when
 * there is nothing more to learn (gone, proven). From the earliest moment its reading can step
 * from 1 to 0, every `stepMs`; after that step, 1 s later. A granted TTL under 3 s cannot be
 * proven: it is read every half of (granted − 1 s), which keeps its earliest expiry current.
 */
export function nextProofReadAt(reading: TtlReading, stepMs: number): number | null {
  if (!reading || reading.ranOutBy !== null) return null;
  if (reading.ttlMs < MIN_PROVABLE_TTL_MS) return reading.readAt + Math.max(stepMs, SHORT_TTL_EVERY * (reading.ttlMs - SECOND_MS));
  if (reading.zero) return reading.zero.finishedAt + SECOND_MS + RATE_MARGIN_MS;
  return Math.max(reading.earliestEnd - SECOND_MS, reading.readAt + stepMs);
}
