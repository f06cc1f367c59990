// From reads to history: what the collector saw in one read of a lease, compared with what
// it knew before, judged on the observer's own monotonic clock. diffLease works in steps:
// bound what the backend said (observation.ts), classify what happened into a Transition
// (transition.ts), then apply that transition to a new picture of the lease, here.
import { boundObservation, clampWall, isHeld, type Observation, type ReadContext } from './observation';
import { narrowedExpiry, newTrackedLease, type DiffResult, type LeaseChange, type Renewal, type TrackedLease } from './tracked-lease';
import { classify, expiryOf, judgementOf, type Judgement, type Transition } from './transition';
import { countUnseenGrants } from './unseen-grants';

export * from './observation';
export * from './tracked-lease';
export type { Transition } from './transition';

/** Compares what was known with what one read shows. Pure: time comes from `read`. */
export function diffLease(prev: TrackedLease | undefined, unbounded: Observation | undefined, read: ReadContext): DiffResult {
  // 1. Keep what the backend said within bounds every column and date can hold.
  const bounded = unbounded && boundObservation(unbounded, read.startedWall);
  // A key that is gone is judged as not there; only its counter of grants is kept (step 6).
  const observation = bounded?.gone ? undefined : bounded;
  if (!prev && !observation) return { next: undefined, changes: [], renewal: null };
  // 2. Judge the read's timing, and classify what happened since the last one.
  const j = judgementOf(prev, observation, read);
  const transition = classify(prev, observation, j);
  // 3. A new picture of the lease: seen now, not stale, with what this read says of its queue.
  const next = picture(prev, observation, read);
  if (transition.type === 'unreadable') {
    next.state = 'unknown';
    return { next, changes: [], renewal: null };
  }
  // 4. Tokens only go up: a lower token than the last known one is a correctness alarm,
  //    whatever else happened (even across an outage).
  const step: Step = { prev, o: observation, next, read, j, changes: [], renewal: null };
  tokenRegression(step);
  // 5. Apply the transition.
  (APPLY[transition.type] as (t: Transition, s: Step) => void)(transition, step);
  // 6. Grants that came and went between this read and the last, proven by a counter.
  countUnseenGrants(step, bounded?.issued);
  return { next, changes: step.changes, renewal: step.renewal };
}

function picture(prev: TrackedLease | undefined, observation: Observation | undefined, read: ReadContext): TrackedLease {
  const next: TrackedLease = prev ? { ...prev, stale: false, observedAtMono: read.startedMono, observedAtWall: read.startedWall } : newTrackedLease(read, observation!.kind, observation!.key);
  if (observation) {
    next.kind = observation.kind;
    next.candidates = observation.candidates;
    next.detail = observation.detail ?? null;
    next.problem = observation.problem ?? null;
  }
  return next;
}

/** What applying a transition works on: the new picture, and the changes and renewal it finds. */
export type Step = {
  prev: TrackedLease | undefined;
  o: Observation | undefined;
  next: TrackedLease;
  read: ReadContext;
  j: Judgement;
  changes: LeaseChange[];
  renewal: Renewal | null;
};

type Held = Observation & { holder: string };
type Was = Step & { prev: TrackedLease & { holder: string } };
type Now = Step & { o: Held };

const toWall = (s: Step, mono: number) => clampWall(Math.round(s.read.startedWall + (mono - s.j.now)));

function push(s: Step, change: Omit<LeaseChange, 'detail'> & { detail?: Record<string, unknown> | null }) {
  s.changes.push({ ...change, detail: change.detail ?? null });
}

function tokenRegression(s: Step) {
  if (!isHeld(s.o) || s.o.token === null) return;
  const known = s.prev?.token ?? s.prev?.lastToken ?? null;
  if (known === null || s.o.token >= known) return;
  push(s, {
    type: 'token_regression',
    atWall: s.read.startedWall,
    holder: s.o.holder,
    previousHolder: s.prev?.holder ?? s.prev?.lastHolder ?? null,
    token: s.o.token,
    previousToken: known,
    gapMs: null,
  });
}

/** The lease is held by this observation's grant, made (or last renewed) at grantMono. */
function hold(s: Step, o: Held, grantMono: number) {
  const { next } = s;
  next.state = 'held';
  next.holder = o.holder;
  next.token = o.token;
  // Without a recorded TTL, the remaining time of a fresh grant is the best estimate of it
  // (raised later if a renewal shows more).
  next.ttlMs = o.ttlMs ?? (o.remainingMs !== null && o.remainingMs > 0 ? o.remainingMs : null);
  const expiry = expiryOf(o, s.j);
  next.expiresAtMono = expiry;
  next.expiryUncertaintyMs = s.j.uncertainty;
  next.expiresAtWall = expiry === null ? null : toWall(s, expiry);
  next.acquiredAtWall = toWall(s, grantMono);
  next.renewedAtWall = null;
  next.lastRenewalMono = grantMono;
  next.ended = null;
}

/** The previous holder is the last one now. */
function succeed(s: Was) {
  s.next.lastHolder = s.prev.holder;
  s.next.lastToken = s.prev.token;
}

/** Nobody holds it: the grant of prev ended at atMono. */
function release(s: Was, cause: 'expired' | 'released', atMono: number) {
  const { next } = s;
  next.state = cause === 'expired' ? 'expired' : 'free';
  succeed(s);
  next.holder = null;
  next.token = null;
  next.expiresAtMono = s.o ? expiryOf(s.o, s.j) : null;
  next.expiresAtWall = next.expiresAtMono === null ? null : toWall(s, next.expiresAtMono);
  next.renewedAtWall = null;
  next.lastRenewalMono = null;
  next.ended = { holder: s.prev.holder, token: s.prev.token, atMono, atWall: toWall(s, atMono), cause };
  next.transitions += 1;
  push(s, { type: cause, atWall: toWall(s, atMono), holder: null, previousHolder: s.prev.holder, token: null, previousToken: s.prev.token, gapMs: null });
}

/** A TTL is learnt from the backend, or raised to the longest remaining time seen. */
function learnTtl(s: Now) {
  if (s.o.ttlMs !== null) s.next.ttlMs = s.o.ttlMs;
  else if (s.o.remainingMs !== null && (s.next.ttlMs ?? 0) < s.o.remainingMs) s.next.ttlMs = s.o.remainingMs;
}

function gapChange(s: Was): LeaseChange {
  const holder = isHeld(s.o) ? s.o.holder : null;
  const token = isHeld(s.o) ? s.o.token : null;
  return {
    type: 'observation_gap',
    atWall: s.read.startedWall,
    holder,
    previousHolder: s.prev.holder,
    token,
    previousToken: s.prev.token,
    gapMs: null,
    detail: {
      lastSeenAt: new Date(s.prev.observedAtWall).toISOString(),
      seenAgainAt: new Date(s.read.startedWall).toISOString(),
      before: { holder: s.prev.holder, token: s.prev.token?.toString() ?? null },
      after: { holder, token: token?.toString() ?? null },
    },
  };
}

/** An acquisition by this read's holder after prev's grant, with the gap between them (null: not known). */
function acquiredAfter(s: Now & Was, atMono: number, gapMs: number | null, detail: Record<string, unknown>) {
  push(s, { type: 'acquired', atWall: toWall(s, atMono), holder: s.o.holder, previousHolder: s.prev.holder, token: s.o.token, previousToken: s.prev.token, gapMs, detail });
}

type Appliers = { [K in Transition['type']]: (t: Extract<Transition, { type: K }>, s: Step) => void };

// Each transition's classification guarantees what it was and is: held before (Was) and held now (Now).
const APPLY: Appliers = {
  unreadable: () => {},
  same_grant: (_, s) => {
    const n = s as Now & Was;
    n.next.state = 'held';
    n.next.token = n.o.token;
    // Not renewed beyond noise, but this reading may still narrow down the same expiry.
    const expiry = expiryOf(n.o, n.j);
    if (expiry !== null) {
      Object.assign(n.next, narrowedExpiry(n.prev, expiry, n.j.uncertainty));
      n.next.expiresAtWall = toWall(n, n.next.expiresAtMono!);
    }
    learnTtl(n);
  },
  renewed: ({ renewedMono }, s) => {
    const n = s as Now & Was;
    const expiry = expiryOf(n.o, n.j)!;
    const previous = n.prev.lastRenewalMono ?? renewedMono;
    n.renewal = {
      atWall: toWall(n, renewedMono),
      holder: n.o.holder,
      intervalMs: Math.max(0, Math.round(renewedMono - previous)),
      marginMs: Math.max(0, Math.round(n.prev.expiresAtMono! - renewedMono)),
      // Dated by its TTL, renewedMono is the earliest it can have been; else it is this read,
      // and it may have come any time after the read before.
      marginUncertaintyMs: Math.round(n.prev.expiryUncertaintyMs + (n.o.ttlMs != null ? 0 : Math.max(0, renewedMono - n.prev.observedAtMono))),
      ttlMs: n.o.ttlMs ?? n.prev.ttlMs,
    };
    Object.assign(n.next, { state: 'held', token: n.o.token, expiresAtMono: expiry, expiryUncertaintyMs: n.j.uncertainty, expiresAtWall: toWall(n, expiry), renewedAtWall: toWall(n, renewedMono), lastRenewalMono: renewedMono });
    learnTtl(n);
  },
  new_grant_after_gap: ({ grantMono }, s) => {
    const n = s as Now & Was;
    n.changes.push(gapChange(n));
    hold(n, n.o, grantMono);
    succeed(n);
  },
  handed_to_queued: ({ atMono, cause }, s) => {
    const n = s as Now & Was;
    push(n, { type: cause, atWall: toWall(n, atMono), holder: null, previousHolder: n.prev.holder, token: null, previousToken: n.prev.token, gapMs: null });
    acquiredAfter(n, atMono, 0, { cause, queued: true });
    n.next.transitions += 2;
    hold(n, n.o, atMono);
    succeed(n);
  },
  expired_then_acquired: ({ expiredMono, grantMono }, s) => {
    const n = s as Now & Was;
    push(n, { type: 'expired', atWall: toWall(n, expiredMono), holder: null, previousHolder: n.prev.holder, token: null, previousToken: n.prev.token, gapMs: null });
    acquiredAfter(n, grantMono, Math.max(0, Math.round(grantMono - expiredMono)), n.o.holder === n.prev.holder ? { cause: 'expired', sameHolder: true } : { cause: 'expired' });
    n.next.transitions += 2;
    hold(n, n.o, grantMono);
    succeed(n);
  },
  released_then_acquired: ({ grantMono }, s) => {
    const n = s as Now & Was;
    // Let go between the two reads, when is not known: dated at the grant that followed, the
    // latest it can have been, and no gap is claimed.
    push(n, { type: 'released', atWall: toWall(n, grantMono), holder: null, previousHolder: n.prev.holder, token: null, previousToken: n.prev.token, gapMs: null, detail: { betweenReads: true } });
    acquiredAfter(n, grantMono, null, n.o.holder === n.prev.holder ? { cause: 'released', sameHolder: true } : { cause: 'released' });
    n.next.transitions += 2;
    hold(n, n.o, grantMono);
    succeed(n);
  },
  taken_over: ({ grantMono }, s) => {
    const n = s as Now & Was;
    push(n, { type: 'taken_over', atWall: toWall(n, grantMono), holder: n.o.holder, previousHolder: n.prev.holder, token: n.o.token, previousToken: n.prev.token, gapMs: 0 });
    n.next.transitions += 1;
    hold(n, n.o, grantMono);
    succeed(n);
  },
  ended_after_gap: (_, s) => {
    const n = s as Was;
    n.changes.push(gapChange(n));
    n.next.state = n.o && n.o.holder !== null && !n.o.released ? 'expired' : 'free';
    succeed(n);
    n.next.holder = null;
    n.next.token = null;
    n.next.ended = null;
  },
  released: ({ atMono }, s) => release(s as Was, 'released', atMono),
  expired: ({ atMono }, s) => release(s as Was, 'expired', atMono),
  acquired: ({ grantMono, after }, s) => {
    const n = s as Now;
    const ended = typeof after === 'object' ? after.ended : null;
    const detail: Record<string, unknown> = after === 'first_sight' ? { firstSeen: true } : after === 'gap' ? { afterGap: true } : ended ? { cause: ended.cause } : {};
    push(n, {
      type: 'acquired',
      atWall: toWall(n, grantMono),
      holder: n.o.holder,
      previousHolder: ended?.holder ?? null,
      token: n.o.token,
      previousToken: ended?.token ?? null,
      gapMs: ended ? Math.max(0, Math.round(grantMono - ended.atMono)) : null,
      detail,
    });
    if (n.prev) n.next.transitions += 1;
    hold(n, n.o, grantMono);
    // First sight shows when it was last granted *or renewed*; when it was acquired is unknown.
    if (!n.prev) n.next.acquiredAtWall = null;
  },
  seen_before: () => {},
  still_not_held: (_, s) => {
    // Keep the picture current (an expired row, a free key).
    const { o, next } = s;
    if (!o) return;
    next.state = o.holder !== null && !o.released ? 'expired' : next.state === 'expired' ? 'expired' : 'free';
    if (o.holder !== null) next.lastHolder = o.holder;
    if (o.token !== null) next.lastToken = o.token;
    next.expiresAtMono = expiryOf(o, s.j);
    next.expiresAtWall = next.expiresAtMono === null ? null : toWall(s, next.expiresAtMono);
  },
};
