// From reads to history: what the collector saw in one read of a lease, compared with what
// it knew before, judged on the observer's own monotonic clock.
//
// Rules (DESIGN.md section 1):
// - Expiry is estimated as read start + the remaining time the backend reported. The read
//   start is the earliest the backend could have measured it, so the estimate is never late.
// - A lease is `expired` only when a read shows it gone (or lapsed) at or after that estimate;
//   gone earlier means `released`.
// - A change of holder is `taken_over` when the old lease was still valid, otherwise
//   `expired`/`released` followed by `acquired`, and the pair is a failover with its gap.
// - After a read the collector could not make (an outage, a compacted watch, a handover), it
//   knows the state before and after but not what happened between: `observation_gap`, and
//   no expiry, release or failover is invented.
import type { Backend, EventType, LeaseKind, LeaseState } from './types';

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
 * Backends hold durations no date can show: Redis takes a PX of 2^63 ms, a lease table an
 * expiry of 294276 AD or 4000 BC. Remaining times and TTLs are kept within ±MAX_DURATION_MS
 * (about 27,000 years) and wall times between the years 1 and 9999, which every store column,
 * JavaScript Date and ISO text can hold; a lease whose numbers were cut says so in its detail.
 */
export const MAX_DURATION_MS = 864_000_000_000_000;
export const MIN_WALL_MS = -62_135_596_800_000; // 0001-01-01T00:00:00.000Z
export const MAX_WALL_MS = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z

const clampWall = (ms: number) => Math.min(MAX_WALL_MS, Math.max(MIN_WALL_MS, ms));

/**
 * The observation with its numbers inside the bounds above, or with a problem when one is not
 * a number at all. What was cut is named in detail.clamped, the same way at every read, so a
 * lease whose TTL is forty thousand years is still "unchanged" from one read to the next: a
 * remaining time beyond MAX_DURATION_MS is no expiry at all (held until deleted, as a Redis key
 * without one), since an expiry estimate moved along with the clock would look like a renewal
 * at every read. Applying it twice changes nothing.
 */
/** The most candidates kept of one lease's queue (the next ones in line). */
export const MAX_CANDIDATES = 100;

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

const isHeld = (o: Observation | undefined): o is Observation & { holder: string } =>
  o !== undefined && o.holder !== null && !o.problem && (o.remainingMs === null || o.remainingMs > 0);

export function leaseIdOf(source: string, key: string): string {
  return `${source}/${key}`;
}

/** Compares what was known with what one read shows. Pure: time comes from `read`. */
export function diffLease(prev: TrackedLease | undefined, unbounded: Observation | undefined, read: ReadContext): DiffResult {
  const observation = unbounded && boundObservation(unbounded, read.startedWall);
  const now = read.startedMono;
  const toWall = (mono: number) => clampWall(Math.round(read.startedWall + (mono - now)));
  const uncertainty = (observation?.precisionMs ?? 0) + Math.max(0, (read.finishedMono ?? now) - now);
  // Two estimates differ by more than noise only beyond both of their uncertainties.
  const slack = uncertainty + (prev?.expiryUncertaintyMs ?? 0) + TIMING_SLACK_MS;
  const changes: LeaseChange[] = [];
  let renewal: Renewal | null = null;

  if (!prev && !observation) return { next: undefined, changes, renewal };
  const key = observation?.key ?? prev!.key;
  const base: TrackedLease = prev
    ? { ...prev, stale: false, observedAtMono: now, observedAtWall: read.startedWall }
    : {
        id: leaseIdOf(read.source, key),
        source: read.source,
        backend: read.backend,
        kind: observation!.kind,
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
        observedAtMono: now,
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
  const next: TrackedLease = base;
  if (observation) {
    next.kind = observation.kind;
    next.candidates = observation.candidates;
    next.detail = observation.detail ?? null;
    next.problem = observation.problem ?? null;
  }
  const push = (change: Omit<LeaseChange, 'detail'> & { detail?: Record<string, unknown> | null }) =>
    changes.push({ ...change, detail: change.detail ?? null });

  // A value that cannot be interpreted: claim nothing about the lease.
  if (observation?.problem) {
    next.state = 'unknown';
    return { next, changes, renewal };
  }

  // A lease that was stale (its source or table could not be read) or unknown (its row could
  // not be interpreted) was not watched meanwhile: this read is compared with the last state
  // known before, as after a gap, and nothing that happened between is invented.
  const afterGap = read.afterGap || prev?.stale === true || prev?.state === 'unknown';
  const wasHeld = (prev?.state === 'held' || prev?.state === 'unknown') && prev.holder !== null;
  const nowHeld = isHeld(observation);
  const expiryOf = (o: Observation) => (o.remainingMs === null ? null : now + o.remainingMs);
  // When the current grant (or renewal) happened, estimated from its expiry and TTL.
  const grantTimeOf = (o: Observation, floor: number) => {
    const expiry = expiryOf(o);
    const ttl = o.ttlMs ?? null;
    if (expiry === null || ttl === null) return now;
    return Math.min(now, Math.max(floor, expiry - ttl));
  };

  // Tokens only go up: a lower token than the last known one is a correctness alarm,
  // whatever else happened (even across an outage).
  if (nowHeld && observation.token !== null) {
    const known = prev?.token ?? prev?.lastToken ?? null;
    if (known !== null && observation.token < known) {
      push({
        type: 'token_regression',
        atWall: read.startedWall,
        holder: observation.holder,
        previousHolder: prev?.holder ?? prev?.lastHolder ?? null,
        token: observation.token,
        previousToken: known,
        gapMs: null,
      });
    }
  }

  const hold = (o: Observation & { holder: string }, grantMono: number, renewedWall: number | null) => {
    next.state = 'held';
    next.holder = o.holder;
    next.token = o.token;
    // Without a recorded TTL, the remaining time of a fresh grant is the best estimate of it
    // (raised later if a renewal shows more).
    next.ttlMs = o.ttlMs ?? (o.remainingMs !== null && o.remainingMs > 0 ? o.remainingMs : null);
    const expiry = expiryOf(o);
    next.expiresAtMono = expiry;
    next.expiryUncertaintyMs = uncertainty;
    next.expiresAtWall = expiry === null ? null : toWall(expiry);
    next.acquiredAtWall = toWall(grantMono);
    next.renewedAtWall = renewedWall;
    next.lastRenewalMono = grantMono;
  };
  const release = (o: Observation | undefined, cause: 'expired' | 'released', atMono: number) => {
    next.state = cause === 'expired' ? 'expired' : 'free';
    next.lastHolder = prev!.holder;
    next.lastToken = prev!.token;
    next.holder = null;
    next.token = null;
    next.expiresAtMono = o ? expiryOf(o) : null;
    next.expiresAtWall = next.expiresAtMono === null ? null : toWall(next.expiresAtMono);
    next.renewedAtWall = null;
    next.lastRenewalMono = null;
    next.ended = { holder: prev!.holder!, token: prev!.token, atMono, atWall: toWall(atMono), cause };
  };

  // ------------------------------------------------------------------ held before
  // The same holder with another token is not a change of hands: it renewed and the backend
  // gave it a new token on the way (some lease tables bump the token on every renewal), or
  // a lower token was reported above as a regression and is nothing more. Unless its grant
  // had run out first: then it is an expiry and an acquisition by the same holder (below).
  // That is judged by the earliest the new grant can have been made: with no TTL to date it
  // by, the last read that still saw the old one, so that a renewal seen late (after the old
  // expiry had passed, though it was made before) is not taken for an expiry.
  // A candidate queued under the same name (etcd proposals need not differ) is another grant.
  const wasQueued = wasHeld && nowHeld && prev.candidates.some((c) => c.holder === observation.holder && c.token === observation.token);
  const reacquired =
    wasHeld &&
    nowHeld &&
    prev.expiresAtMono !== null &&
    prev.token !== null &&
    observation.token !== null &&
    observation.token > prev.token &&
    prev.expiresAtMono <= (observation.ttlMs == null || expiryOf(observation) === null ? prev.observedAtMono : grantTimeOf(observation, prev.observedAtMono)) + slack;
  if (wasHeld && nowHeld && observation.holder === prev.holder && (observation.token === prev.token || (!afterGap && !wasQueued && !reacquired))) {
    // Same grant. A renewal moved its expiry forward by more than the reading's precision.
    next.state = 'held';
    next.token = observation.token;
    const expiry = expiryOf(observation);
    if (expiry !== null && prev.expiresAtMono !== null && expiry > prev.expiresAtMono + slack) {
      const renewedAt = grantTimeOf(observation, prev.observedAtMono);
      const previous = prev.lastRenewalMono ?? renewedAt;
      renewal = {
        atWall: toWall(renewedAt),
        holder: observation.holder,
        intervalMs: Math.max(0, Math.round(renewedAt - previous)),
        marginMs: Math.max(0, Math.round(prev.expiresAtMono - renewedAt)),
        ttlMs: observation.ttlMs ?? prev.ttlMs,
      };
      next.expiresAtMono = expiry;
      next.expiryUncertaintyMs = uncertainty;
      next.expiresAtWall = toWall(expiry);
      next.renewedAtWall = toWall(renewedAt);
      next.lastRenewalMono = renewedAt;
      if (observation.ttlMs !== null) next.ttlMs = observation.ttlMs;
      else if (observation.remainingMs !== null && (next.ttlMs ?? 0) < observation.remainingMs) next.ttlMs = observation.remainingMs;
    } else {
      // The first reading of a lease whose remaining time was unknown: now it is known.
      if (expiry !== null && prev.expiresAtMono === null) {
        next.expiresAtMono = expiry;
        next.expiryUncertaintyMs = uncertainty;
        next.expiresAtWall = toWall(expiry);
      }
      if (observation.ttlMs !== null) next.ttlMs = observation.ttlMs;
      else if (observation.remainingMs !== null && (next.ttlMs ?? 0) < observation.remainingMs) next.ttlMs = observation.remainingMs;
    }
    return { next, changes, renewal };
  }

  if (wasHeld && nowHeld) {
    // Another grant: a new holder, or the same holder with a new token. A candidate that was
    // queued behind the old holder (an etcd election or mutex) took over the moment the old
    // holder's key went away, not when its own lease was last kept alive.
    if (afterGap) {
      push({ ...gapChange(prev, observation, read), atWall: read.startedWall });
      hold(observation, grantTimeOf(observation, prev.observedAtMono), null);
      next.lastHolder = prev.holder;
      next.lastToken = prev.token;
      next.ended = null;
      return { next, changes, renewal };
    }
    const oldExpiry = prev.expiresAtMono;
    if (wasQueued) {
      // The backend hands over atomically: the old holder's key went away (its lease ran out,
      // or it resigned) and the first in line leads from that moment. Between our last read
      // that saw the old holder and this one, and not before its expiry estimate.
      const handover = oldExpiry !== null ? Math.min(now, Math.max(prev.observedAtMono, oldExpiry)) : now;
      const lapsed = oldExpiry !== null && oldExpiry <= handover + slack;
      const cause = lapsed ? 'expired' : 'released';
      push({ type: cause, atWall: toWall(handover), holder: null, previousHolder: prev.holder, token: null, previousToken: prev.token, gapMs: null });
      push({
        type: 'acquired',
        atWall: toWall(handover),
        holder: observation.holder,
        previousHolder: prev.holder,
        token: observation.token,
        previousToken: prev.token,
        gapMs: 0,
        detail: { cause, queued: true },
      });
      next.transitions += 2;
      hold(observation, handover, null);
      next.lastHolder = prev.holder;
      next.lastToken = prev.token;
      next.ended = null;
      return { next, changes, renewal };
    }
    const grantMono = grantTimeOf(observation, prev.observedAtMono);
    if (oldExpiry !== null && oldExpiry <= grantMono + slack) {
      // The old grant ran out first; then someone acquired: a missed renewal and a failover.
      push({ type: 'expired', atWall: toWall(oldExpiry), holder: null, previousHolder: prev.holder, token: null, previousToken: prev.token, gapMs: null });
      push({
        type: 'acquired',
        atWall: toWall(grantMono),
        holder: observation.holder,
        previousHolder: prev.holder,
        token: observation.token,
        previousToken: prev.token,
        gapMs: Math.max(0, Math.round(grantMono - oldExpiry)),
        detail: observation.holder === prev.holder ? { cause: 'expired', sameHolder: true } : { cause: 'expired' },
      });
      next.transitions += 2;
    } else {
      push({
        type: 'taken_over',
        atWall: toWall(grantMono),
        holder: observation.holder,
        previousHolder: prev.holder,
        token: observation.token,
        previousToken: prev.token,
        gapMs: 0,
      });
      next.transitions += 1;
    }
    hold(observation, grantMono, null);
    next.lastHolder = prev.holder;
    next.lastToken = prev.token;
    next.ended = null;
    return { next, changes, renewal };
  }

  if (wasHeld && !nowHeld) {
    if (afterGap) {
      push({ ...gapChange(prev, observation, read), atWall: read.startedWall });
      next.state = observation && observation.holder !== null && !observation.released ? 'expired' : 'free';
      next.lastHolder = prev.holder;
      next.lastToken = prev.token;
      next.holder = null;
      next.token = null;
      next.ended = null;
      return { next, changes, renewal };
    }
    // Gone or lapsed. Expired if our expiry estimate has passed (or the backend says the
    // lease ran out at about that time); released if it ended earlier than it could expire.
    const oldExpiry = prev.expiresAtMono;
    const reportedEnd = observation ? expiryOf(observation) : null;
    const endedEarly =
      observation?.released === true ||
      (oldExpiry === null ? true : reportedEnd !== null ? reportedEnd < oldExpiry - slack : oldExpiry > now + slack);
    if (endedEarly) {
      const atMono = reportedEnd !== null && reportedEnd <= now ? Math.max(prev.observedAtMono, reportedEnd) : now;
      push({ type: 'released', atWall: toWall(atMono), holder: null, previousHolder: prev.holder, token: null, previousToken: prev.token, gapMs: null });
      release(observation, 'released', atMono);
    } else {
      push({ type: 'expired', atWall: toWall(oldExpiry!), holder: null, previousHolder: prev.holder, token: null, previousToken: prev.token, gapMs: null });
      release(observation, 'expired', oldExpiry!);
    }
    next.transitions += 1;
    return { next, changes, renewal };
  }

  // ------------------------------------------------------------------ not held before
  if (nowHeld) {
    // First sight: the grant (or its last renewal) may be long past, so no lower bound.
    const grantMono = grantTimeOf(observation, prev?.observedAtMono ?? -Infinity);
    const ended = prev?.ended ?? null;
    const detail: Record<string, unknown> = {};
    let previousHolder: string | null = null;
    let previousToken: bigint | null = null;
    let gapMs: number | null = null;
    if (!prev) detail.firstSeen = true;
    else if (afterGap) detail.afterGap = true;
    else if (ended) {
      // Paired with how the previous grant ended: a failover when someone else took it.
      previousHolder = ended.holder;
      previousToken = ended.token;
      gapMs = Math.max(0, Math.round(grantMono - ended.atMono));
      detail.cause = ended.cause;
    }
    push({ type: 'acquired', atWall: toWall(grantMono), holder: observation.holder, previousHolder, token: observation.token, previousToken, gapMs, detail });
    if (prev) next.transitions += 1;
    hold(observation, grantMono, null);
    // First sight shows when it was last granted *or renewed*; when it was acquired is unknown.
    if (!prev) next.acquiredAtWall = null;
    next.ended = null;
    return { next, changes, renewal };
  }

  // Not held before, not held now: keep the picture current (an expired row, a free key).
  if (observation) {
    next.state = observation.holder !== null && !observation.released ? 'expired' : next.state === 'expired' ? 'expired' : 'free';
    if (observation.holder !== null) next.lastHolder = observation.holder;
    if (observation.token !== null) next.lastToken = observation.token;
    next.expiresAtMono = expiryOf(observation);
    next.expiresAtWall = next.expiresAtMono === null ? null : toWall(next.expiresAtMono);
  }
  return { next, changes, renewal };
}

function gapChange(prev: TrackedLease, observation: Observation | undefined, read: ReadContext): Omit<LeaseChange, 'atWall'> {
  const holder = isHeld(observation) ? observation.holder : null;
  const token = isHeld(observation) ? observation.token : null;
  return {
    type: 'observation_gap',
    holder,
    previousHolder: prev.holder,
    token,
    previousToken: prev.token,
    gapMs: null,
    detail: {
      lastSeenAt: new Date(prev.observedAtWall).toISOString(),
      seenAgainAt: new Date(read.startedWall).toISOString(),
      before: { holder: prev.holder, token: prev.token?.toString() ?? null },
      after: { holder, token: token?.toString() ?? null },
    },
  };
}

/** Marks every lease of a source that could not be read: nothing is claimed, nothing is invented. */
export function markStale(lease: TrackedLease): TrackedLease {
  return lease.stale ? lease : { ...lease, stale: true };
}

/** The state one read shows on its own, without history (for `leasehold snapshot`). */
export function stateOf(observation: Observation): LeaseState {
  if (observation.problem) return 'unknown';
  if (isHeld(observation)) return 'held';
  return observation.holder !== null && !observation.released ? 'expired' : 'free';
}

export type AppliedRead = {
  /** Leases whose stored row must change (new, changed, renewed, no longer stale). */
  dirty: TrackedLease[];
  /** Of those, the ones whose only change is a renewal (their row can wait for a batch). */
  renewedOnly: Set<TrackedLease>;
  /** Changes with the sequence number each is stored under: a retried write never duplicates one. */
  events: { lease: TrackedLease; seq: number; change: LeaseChange }[];
  renewals: { lease: TrackedLease; seq: number; renewal: Renewal }[];
};

/**
 * Applies one read to what is known about a source's leases (updated in place).
 * `covered`: the keys a partial read speaks for; omitted for a full snapshot, where every
 * known lease missing from the read is gone.
 */
export function applyRead(known: Map<string, TrackedLease>, observations: readonly Observation[], read: ReadContext, covered?: readonly string[]): AppliedRead {
  const byKey = new Map(observations.map((o) => [o.key, boundObservation(o, read.startedWall)]));
  const keys = new Set<string>(covered ?? known.keys());
  for (const key of byKey.keys()) keys.add(key);
  const result: AppliedRead = { dirty: [], renewedOnly: new Set(), events: [], renewals: [] };
  for (const key of keys) {
    const prev = known.get(key);
    const observation = byKey.get(key);
    // Most leases, most reads: nothing changed. Say so without building a new picture.
    if (prev && observation && unchanged(prev, observation, read)) {
      prev.observedAtMono = read.startedMono;
      prev.observedAtWall = read.startedWall;
      continue;
    }
    const { next, changes, renewal } = diffLease(prev, observation, read);
    if (!next) continue;
    for (const change of changes) result.events.push({ lease: next, seq: ++next.eventSeq, change });
    if (renewal) {
      result.renewals.push({ lease: next, seq: ++next.renewalSeq, renewal });
      next.lastRenewal = { intervalMs: renewal.intervalMs, marginMs: renewal.marginMs };
    } else if (changes.some((change) => change.type === 'acquired' || change.type === 'taken_over' || change.type === 'released' || change.type === 'expired')) {
      next.lastRenewal = null; // a new grant, or none: the old grant's renewals say nothing of it
    }
    const changed = !prev || changes.length > 0 || rowChanged(prev, next);
    if (changed || renewal) {
      next.version = (prev?.version ?? 0) + 1;
      result.dirty.push(next);
    }
    if (!changed && renewal) result.renewedOnly.add(next);
    known.set(key, next);
  }
  return result;
}

/**
 * True when this read shows exactly what was known: same holder, token, queue, kind and
 * detail, and (for a held lease) an expiry that did not move forward beyond noise. Then
 * diffLease would produce no change, no renewal and an identical row.
 */
function unchanged(prev: TrackedLease, o: Observation, read: ReadContext): boolean {
  if (read.afterGap || prev.stale || o.problem || prev.problem !== null || prev.kind !== o.kind) return false;
  if (!sameCandidates(prev.candidates, o.candidates) || !sameDetail(prev.detail, o.detail ?? null)) return false;
  if (isHeld(o)) {
    if (prev.state !== 'held' || o.holder !== prev.holder || o.token !== prev.token) return false;
    if (o.remainingMs === null) return prev.expiresAtMono === null;
    if (prev.expiresAtMono === null) return false;
    if (o.ttlMs !== null ? o.ttlMs !== prev.ttlMs : o.remainingMs > (prev.ttlMs ?? 0)) return false;
    const uncertainty = (o.precisionMs ?? 0) + Math.max(0, (read.finishedMono ?? read.startedMono) - read.startedMono);
    return read.startedMono + o.remainingMs <= prev.expiresAtMono + uncertainty + prev.expiryUncertaintyMs + TIMING_SLACK_MS;
  }
  // Not held before, not held now, nothing new about who last held it.
  if (prev.state === 'held') return false;
  if (o.holder === null || o.released) return prev.state === 'free' && (o.token === null || o.token === prev.lastToken || o.token === prev.token);
  return prev.state === 'expired' && prev.lastHolder === o.holder && (o.token === null || o.token === prev.lastToken);
}

function sameCandidates(a: TrackedLease['candidates'], b: Observation['candidates']): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i]!.holder !== b[i]!.holder || a[i]!.token !== b[i]!.token) return false;
  return true;
}

function sameDetail(a: Record<string, unknown> | null, b: Record<string, unknown> | null): boolean {
  if (a === b) return true;
  if (a === null || b === null) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) {
    const x = a[key];
    const y = b[key];
    if (x === y) continue;
    if (typeof x !== 'object' || typeof y !== 'object' || JSON.stringify(x) !== JSON.stringify(y)) return false;
  }
  return true;
}

/** Whether what the stored row shows differs (timing noise in expiry estimates does not count). */
function rowChanged(prev: TrackedLease, next: TrackedLease): boolean {
  return (
    prev.stale !== next.stale ||
    prev.state !== next.state ||
    prev.holder !== next.holder ||
    prev.token !== next.token ||
    prev.problem !== next.problem ||
    prev.kind !== next.kind ||
    prev.ttlMs !== next.ttlMs ||
    !sameCandidates(prev.candidates, next.candidates) ||
    !sameDetail(prev.detail, next.detail)
  );
}
