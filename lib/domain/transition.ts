// Step one of judging a read (lib/domain/observe.ts diffLease): what happened to the lease
// between what was known and what this read shows, as one Transition. Nothing is changed
// here; diffLease applies the transition to a new picture of the lease.
//
// Rules (docs/architecture.md, "Judging a read"):
// - Expiry is estimated as read start + the remaining time the backend reported. The read
//   start is the earliest the backend could have measured it, so the estimate is never late:
//   it is the earliest the lease can run out (a renewal only moves that later).
// - A lease gone by the end of a read that finished before that earliest expiry was given up:
//   `released`, however coarse the backend's clock (etcd counts whole seconds). Gone (or
//   lapsed) at or after it is `expired`.
// - A change of holder is `taken_over` when the old lease was still valid, otherwise
//   `expired`/`released` followed by `acquired`, and the pair is a failover with its gap.
// - After a read the collector could not make (an outage, a compacted watch, a handover), it
//   knows the state before and after but not what happened between: `observation_gap`, and
//   no expiry, release or failover is invented.
import { isHeld, type Observation, type ReadContext } from './observation';
import { TIMING_SLACK_MS, type TrackedLease } from './tracked-lease';

export type Transition =
  /** The backend holds something that cannot be interpreted: nothing is claimed. */
  | { type: 'unreadable' }
  /** Held before and now by the same grant, its expiry where it was (or first known now). */
  | { type: 'same_grant' }
  /** The same grant, its expiry moved forward beyond noise: renewed at renewedMono. */
  | { type: 'renewed'; renewedMono: number }
  /** Held before and now by another grant, and the read before this one was not made. */
  | { type: 'new_grant_after_gap'; grantMono: number }
  /** The first in line (an etcd election or mutex) took over when the old holder's key went. */
  | { type: 'handed_to_queued'; atMono: number; cause: 'expired' | 'released' }
  /** The old grant ran out, then someone (maybe the same holder) acquired: a failover. */
  | { type: 'expired_then_acquired'; expiredMono: number; grantMono: number }
  /** A counter raised only by grants shows a new one (same holder or not): the old grant had ended, unseen, before it. */
  | { type: 'released_then_acquired'; grantMono: number }
  /** Someone else was granted it while the old grant was still valid. */
  | { type: 'taken_over'; grantMono: number }
  /** Held before, not now, and the read before this one was not made. */
  | { type: 'ended_after_gap' }
  /** Held before, gone earlier than it could expire. */
  | { type: 'released'; atMono: number }
  /** Held before, gone at or after its expiry estimate. */
  | { type: 'expired'; atMono: number }
  /** Not held before, held now; `ended` is how the previous grant ended, to pair with. */
  | { type: 'acquired'; grantMono: number; after: 'first_sight' | 'gap' | 'nothing' | { ended: NonNullable<TrackedLease['ended']> } }
  /**
   * Held by the grant already known to have ended (a counter of grants says it was the last
   * one): this read looked before the one that saw it end, and tells nothing new.
   */
  | { type: 'seen_before' }
  /** Not held before, not held now (a free key, an expired row, or nothing read). */
  | { type: 'still_not_held' };

/** The read's clock, and how far apart two expiry estimates may be and still be the same. */
export type Judgement = {
  /** Observer monotonic time of the read. */
  now: number;
  /** When the read finished: whatever it found gone was gone by then. */
  readEnd: number;
  /** How late the real expiry may be compared with this read's estimate. */
  uncertainty: number;
  /** Two estimates differ by more than noise only beyond both of their uncertainties. */
  slack: number;
  /** The lease was not watched before this read (an outage, a stale or unknown lease). */
  afterGap: boolean;
};

/** How much later than read start + remaining time a lease's expiry may really be: the backend's precision and the read's duration. */
export const readUncertainty = (observation: Observation | undefined, read: ReadContext) => (observation?.precisionMs ?? 0) + Math.max(0, (read.finishedMono ?? read.startedMono) - read.startedMono);

export function judgementOf(prev: TrackedLease | undefined, observation: Observation | undefined, read: ReadContext): Judgement {
  const now = read.startedMono;
  const uncertainty = readUncertainty(observation, read);
  return {
    now,
    readEnd: Math.max(now, read.finishedMono ?? now),
    uncertainty,
    slack: uncertainty + (prev?.expiryUncertaintyMs ?? 0) + TIMING_SLACK_MS,
    // A lease that was stale (its source or table could not be read) or unknown (its row could
    // not be interpreted) was not watched meanwhile: this read is compared with the last state
    // known before, as after a gap, and nothing that happened between is invented.
    afterGap: read.afterGap || prev?.stale === true || prev?.state === 'unknown',
  };
}

/** The expiry an observation shows, on the observer's monotonic clock; null without a TTL. */
export const expiryOf = (o: Observation, j: Judgement) => (o.remainingMs === null ? null : j.now + o.remainingMs);

/** When the current grant (or renewal) happened, estimated from its expiry and TTL, not before floor. */
export function grantTimeOf(o: Observation, j: Judgement, floor: number): number {
  const expiry = expiryOf(o, j);
  if (expiry === null || o.ttlMs === null) return j.now;
  return Math.min(j.now, Math.max(floor, expiry - o.ttlMs));
}

type Held = Observation & { holder: string };

/** What happened between `prev` and this read. */
export function classify(prev: TrackedLease | undefined, observed: Observation | undefined, j: Judgement): Transition {
  // A key that is gone is judged as not read at all; its counter is for unseen-grants.ts.
  const observation = observed?.gone ? undefined : observed;
  if (observation?.problem) return { type: 'unreadable' };
  const wasHeld = prev !== undefined && (prev.state === 'held' || prev.state === 'unknown') && prev.holder !== null;
  const nowHeld = isHeld(observation);
  if (wasHeld && nowHeld) return classifyStillHeld(prev, observation, j);
  if (wasHeld) return classifyEnd(prev, observation, j);
  // Reads overlap: a full read that started earlier may have looked at this key after a
  // targeted read that started later. With a counter of grants, order is known: a grant
  // already seen to end cannot be held again.
  if (nowHeld && observation.issued !== undefined && prev?.lastToken != null && observation.token === prev.lastToken) return { type: 'seen_before' };
  if (nowHeld) return classifyAcquired(prev, observation, j);
  return { type: 'still_not_held' };
}

function classifyStillHeld(prev: TrackedLease, o: Held, j: Judgement): Transition {
  // 1. The same holder with another token is not a change of hands: it renewed and the backend
  //    gave it a new token on the way (some lease tables bump the token on every renewal), or
  //    a lower token was reported as a regression and is nothing more. Unless its grant had run
  //    out first (reacquired): then it is an expiry and an acquisition by the same holder. That
  //    is judged by the earliest the new grant can have been made: with no TTL to date it by,
  //    the last read that still saw the old one, so that a renewal seen late (after the old
  //    expiry had passed, though it was made before) is not taken for an expiry. A candidate
  //    queued under the same name (etcd proposals need not differ) is another grant.
  const wasQueued = prev.candidates.some((c) => c.holder === o.holder && c.token === o.token);
  const reacquired =
    prev.expiresAtMono !== null &&
    prev.token !== null &&
    o.token !== null &&
    o.token > prev.token &&
    prev.expiresAtMono <= (o.ttlMs == null || expiryOf(o, j) === null ? prev.observedAtMono : grantTimeOf(o, j, prev.observedAtMono)) + j.slack;
  // A backend whose counter is raised at each grant and only then (Observation.issued) proves
  // a new grant by a higher token, even by the same holder (a client that let go and took it again).
  const regranted = o.issued !== undefined && prev.token !== null && o.token !== null && o.token > prev.token;
  if (o.holder === prev.holder && (o.token === prev.token || (!j.afterGap && !wasQueued && !reacquired && !regranted))) {
    // 2. Same grant: renewed when its expiry moved forward beyond what the last estimate allowed.
    //    Both estimates are the earliest the expiry can be, and an expiry only moves forward
    //    unless renewed, so the new one can pass the old one's latest (its own uncertainty)
    //    only by a renewal; this reading's own uncertainty does not widen that.
    const expiry = expiryOf(o, j);
    if (expiry !== null && prev.expiresAtMono !== null && expiry > prev.expiresAtMono + prev.expiryUncertaintyMs + TIMING_SLACK_MS) return { type: 'renewed', renewedMono: grantTimeOf(o, j, prev.observedAtMono) };
    return { type: 'same_grant' };
  }
  // 3. Another grant, not watched between: what happened is not known.
  if (j.afterGap) return { type: 'new_grant_after_gap', grantMono: grantTimeOf(o, j, prev.observedAtMono) };
  const oldExpiry = prev.expiresAtMono;
  if (wasQueued) {
    // 4. The backend hands over atomically: the old holder's key went away (its lease ran out,
    //    or it resigned) and the first in line leads from that moment. Between our last read
    //    that saw the old holder and this one, and not before its expiry estimate; not when
    //    the candidate's own lease was last kept alive.
    const atMono = oldExpiry !== null ? Math.min(j.now, Math.max(prev.observedAtMono, oldExpiry)) : j.now;
    return { type: 'handed_to_queued', atMono, cause: goneBeforeItCouldExpire(oldExpiry, j) ? 'released' : 'expired' };
  }
  // 5. The old grant ran out before the new one was made, or it was taken over.
  const grantMono = grantTimeOf(o, j, prev.observedAtMono);
  if (oldExpiry !== null && oldExpiry <= grantMono + j.slack) return { type: 'expired_then_acquired', expiredMono: oldExpiry, grantMono };
  // Granted only to an absent key (SET NX) and counted: the old grant had been let go first.
  if (regranted) return { type: 'released_then_acquired', grantMono };
  return { type: 'taken_over', grantMono };
}

function classifyEnd(prev: TrackedLease, o: Observation | undefined, j: Judgement): Transition {
  if (j.afterGap) return { type: 'ended_after_gap' };
  // Gone or lapsed. Expired if our expiry estimate has passed (or the backend says the lease
  // ran out at about that time); released if it ended earlier than it could expire.
  const oldExpiry = prev.expiresAtMono;
  const reportedEnd = o ? expiryOf(o, j) : null;
  const endedEarly = o?.released === true || oldExpiry === null || (reportedEnd !== null ? reportedEnd < oldExpiry - j.slack : goneBeforeItCouldExpire(oldExpiry, j));
  // Expired: when the backend says it ran out (a lapsed row, a lease proven run out), else at our estimate.
  if (!endedEarly) return { type: 'expired', atMono: reportedEnd !== null ? Math.min(j.now, Math.max(oldExpiry, reportedEnd)) : oldExpiry };
  return { type: 'released', atMono: reportedEnd !== null && reportedEnd <= j.now ? Math.max(prev.observedAtMono, reportedEnd) : j.now };
}

/**
 * Gone by the end of this read, and that end came before the earliest moment the old grant
 * could run out: it was given up, not lost. The estimate's own uncertainty (how much later the
 * expiry may really be) does not make an early end look like an expiry: it only widens how
 * late an expiry may be, and a renewal only moves it later still.
 */
function goneBeforeItCouldExpire(oldExpiry: number | null, j: Judgement): boolean {
  return oldExpiry === null || oldExpiry > j.readEnd + TIMING_SLACK_MS;
}

function classifyAcquired(prev: TrackedLease | undefined, o: Held, j: Judgement): Transition {
  // First sight: the grant (or its last renewal) may be long past, so no lower bound.
  const grantMono = grantTimeOf(o, j, prev?.observedAtMono ?? -Infinity);
  if (!prev) return { type: 'acquired', grantMono, after: 'first_sight' };
  if (j.afterGap) return { type: 'acquired', grantMono, after: 'gap' };
  // Paired with how the previous grant ended: a failover when someone else took it.
  return { type: 'acquired', grantMono, after: prev.ended ? { ended: prev.ended } : 'nothing' };
}
