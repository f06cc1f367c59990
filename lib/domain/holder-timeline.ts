// Who held a lease when, over a time range, from its events: the holder timeline and the
// token sequence of the lease page. Pure: events, the current lease and the range come in
// as arguments (times in epoch ms), nothing is read from a clock.
//
// The events are taken as the collector stored them (oldest first, by id), not re-sorted by
// time: an `expired` is stored at the old grant's estimated expiry and the `acquired` that
// follows it at the new grant's estimated start, and their order is the one that happened.
import type { EventType, LeaseEventView, LeaseView } from './types';

export type TimelineEvent = Pick<LeaseEventView, 'type' | 'at' | 'holder' | 'previousHolder' | 'token' | 'previousToken' | 'gapMs' | 'detail'>;
export type TimelineLease = Pick<LeaseView, 'state' | 'holder' | 'token' | 'acquiredAt' | 'observedAt' | 'stale'>;

/** How a holder's segment ended within the range: by an event, by the lease's current state, or not at all (null: still held). */
export type SegmentEnd = 'released' | 'expired' | 'taken_over' | 'force_expired' | 'force_released' | 'observation_gap' | 'replaced';

export type HolderSegment = {
  holder: string;
  token: string | null;
  /** Epoch ms, clipped to the range. */
  from: number;
  to: number;
  /** The grant began before the range (or before the first event the range holds). */
  startsBeforeRange: boolean;
  /** null: still held at the end of the range (or, for a stale lease, when it was last read). */
  endedBy: SegmentEnd | null;
};

/** free: nobody held it; unobserved: Leasehold could not see (an observation gap, or a source not read since). */
export type TimelineGap = { from: number; to: number; kind: 'free' | 'unobserved' };

/** A change of holder: taken over directly, or ended (expired, released, forced) and acquired by someone else. */
export type TimelineFailover = {
  at: number;
  from: string;
  to: string;
  cause: SegmentEnd;
  /** Time without a holder between the two grants; 0 for a takeover, null when unknown (across an observation gap). */
  gapMs: number | null;
};

export type HolderTimeline = { start: number; end: number; segments: HolderSegment[]; gaps: TimelineGap[]; failovers: TimelineFailover[] };

const ENDS: ReadonlySet<EventType> = new Set(['released', 'expired', 'force_expired', 'force_released']);

function gapTimes(event: TimelineEvent, at: number): { lastSeen: number; seenAgain: number } {
  const detail = (event.detail ?? {}) as { lastSeenAt?: unknown; seenAgainAt?: unknown };
  const parse = (value: unknown) => (typeof value === 'string' && !Number.isNaN(Date.parse(value)) ? Date.parse(value) : null);
  const seenAgain = parse(detail.seenAgainAt) ?? at;
  return { lastSeen: Math.min(parse(detail.lastSeenAt) ?? seenAgain, seenAgain), seenAgain };
}

/**
 * Segments of holding, the gaps between them and the failovers, within [start, end].
 *
 * 1. The holder at `start` is read off the first event: one that ends a grant (released,
 *    expired, taken over, forced, an observation gap) names who held before it; an
 *    acquisition means nobody did. Without events in the range, the current lease says it.
 * 2. Each event then closes the open segment and/or opens the next one.
 * 3. The current lease has the last word: the events may lag behind it by a second.
 * 4. A stale lease is drawn as held until its last read, then unobserved: unknown is not lost.
 * 5. Whatever no segment or unobserved stretch covers is free.
 */
export function holderTimeline(events: readonly TimelineEvent[], lease: TimelineLease | null, start: number, end: number): HolderTimeline {
  const clip = (t: number) => Math.min(end, Math.max(start, t));
  const segments: HolderSegment[] = [];
  const unobserved: TimelineGap[] = [];
  const failovers: TimelineFailover[] = [];
  // (Assigned in closures below: declared so that TypeScript does not narrow them to null.)
  let open = null as HolderSegment | null;
  /** The last segment that ended, for pairing an end with the next acquisition. */
  let ended = null as HolderSegment | null;
  let cursor = start; // time never runs backwards along the timeline
  const relevant = events.filter((e) => e.type !== 'renewed' && e.type !== 'source_down' && e.type !== 'source_up' && e.type !== 'token_regression');

  // Step 1: who held it when the range began.
  const first = relevant[0];
  if (first) {
    const before = first.type === 'observation_gap' ? (((first.detail ?? {}) as { before?: { holder?: string | null; token?: string | null } }).before ?? null) : null;
    const holder = first.type === 'acquired' ? null : (before?.holder ?? first.previousHolder);
    const token = before ? (before.token ?? first.previousToken) : first.previousToken;
    if (holder) open = { holder, token, from: start, to: start, startsBeforeRange: true, endedBy: null };
  } else if (lease?.state === 'held' && lease.holder) {
    const acquired = lease.acquiredAt ? Date.parse(lease.acquiredAt) : Number.NaN;
    const from = Number.isNaN(acquired) ? start : clip(acquired);
    open = { holder: lease.holder, token: lease.token, from, to: from, startsBeforeRange: from === start, endedBy: null };
  }

  const close = (at: number, endedBy: SegmentEnd) => {
    if (!open) return;
    open.to = Math.max(open.from, at);
    open.endedBy = endedBy;
    segments.push(open);
    ended = open;
    open = null;
  };
  const begin = (holder: string, token: string | null, at: number, cause: SegmentEnd | null, gapMs: number | null) => {
    const previous = open ?? ended;
    if (open) close(at, 'replaced');
    if (previous && previous.holder !== holder) {
      failovers.push({ at, from: previous.holder, to: holder, cause: cause ?? previous.endedBy ?? 'replaced', gapMs });
    }
    open = { holder, token, from: at, to: at, startsBeforeRange: false, endedBy: null };
    ended = null;
  };

  // Step 2: walk the events.
  for (const event of relevant) {
    const raw = Date.parse(event.at);
    if (Number.isNaN(raw)) continue;
    const at = clip(Math.max(cursor, raw));
    cursor = at;
    if (event.type === 'acquired') {
      if (!event.holder) continue;
      // Paired with how the previous grant ended; the collector measured the gap.
      const last = ended;
      if (!open && !last && segments.length === 0 && (event.detail as { firstSeen?: unknown } | null)?.firstSeen === true && at > start) {
        // Leasehold started watching here: before it, nothing is known (not "free").
        unobserved.push({ from: start, to: at, kind: 'unobserved' });
      }
      const gapMs = event.gapMs ?? (last ? Math.max(0, at - last.to) : null);
      begin(event.holder, event.token, at, last?.endedBy ?? null, gapMs);
    } else if (event.type === 'taken_over') {
      if (!event.holder) continue;
      if (!open && !ended && event.previousHolder) {
        // The previous holder's grant is older than anything the range shows.
        open = { holder: event.previousHolder, token: event.previousToken, from: start, to: start, startsBeforeRange: true, endedBy: null };
      }
      if (open) close(at, 'taken_over');
      begin(event.holder, event.token, at, 'taken_over', 0);
    } else if (ENDS.has(event.type)) {
      close(at, event.type as SegmentEnd);
    } else if (event.type === 'observation_gap') {
      const { lastSeen, seenAgain } = gapTimes(event, at);
      const from = clip(Math.max(lastSeen, open?.from ?? start));
      const to = Math.max(from, at);
      const previous = open ?? ended;
      close(from, 'observation_gap');
      if (to > from) unobserved.push({ from, to, kind: 'unobserved' });
      cursor = Math.max(cursor, clip(seenAgain));
      if (event.holder) {
        if (previous && previous.holder !== event.holder) failovers.push({ at: to, from: previous.holder, to: event.holder, cause: 'observation_gap', gapMs: null });
        open = { holder: event.holder, token: event.token, from: to, to, startsBeforeRange: false, endedBy: null };
        ended = null;
      }
    }
  }

  // Step 3: the current lease, which may be ahead of the events.
  if (lease) {
    const observed = clip(Date.parse(lease.observedAt) || end);
    if (lease.state === 'held' && lease.holder) {
      if (!open || open.holder !== lease.holder || open.token !== lease.token) {
        const acquired = lease.acquiredAt ? Date.parse(lease.acquiredAt) : Number.NaN;
        const at = clip(Math.max(cursor, Number.isNaN(acquired) ? cursor : acquired));
        const last = ended;
        begin(lease.holder, lease.token, at, last?.endedBy ?? null, last ? Math.max(0, at - last.to) : null);
      }
    } else if (open && !lease.stale) {
      // The events have not caught up with the end of this grant yet.
      close(Math.max(cursor, observed), lease.state === 'expired' ? 'expired' : 'released');
    }
    // Step 4: a stale lease is known only until its last read.
    if (lease.stale && observed < end) {
      if (open) {
        open.to = Math.max(open.from, observed);
        segments.push(open);
        open = null;
      }
      unobserved.push({ from: observed, to: end, kind: 'unobserved' });
    }
  }
  if (open) {
    open.to = end;
    segments.push(open);
  }

  // Step 5: free time is what neither a holder nor an unobserved stretch covers.
  const covered = [...segments.map((s) => ({ from: s.from, to: s.to })), ...unobserved].filter((c) => c.to > c.from).sort((a, b) => a.from - b.from);
  const gaps: TimelineGap[] = [...unobserved];
  let at = start;
  for (const c of covered) {
    if (c.from > at) gaps.push({ from: at, to: c.from, kind: 'free' });
    at = Math.max(at, c.to);
  }
  if (at < end) gaps.push({ from: at, to: end, kind: 'free' });
  gaps.sort((a, b) => a.from - b.from);

  return { start, end, segments: segments.filter((s) => s.to > s.from || s.endedBy === null), gaps, failovers };
}

/** One sentence for screen readers and the chart caption: "3 holders, 2 failovers, longest time without a holder 4.2 s". */
export function timelineSummary(timeline: HolderTimeline): string {
  const holders = new Set(timeline.segments.map((s) => s.holder)).size;
  const free = timeline.gaps.filter((g) => g.kind === 'free');
  const unobserved = timeline.gaps.filter((g) => g.kind === 'unobserved');
  const parts = [
    holders === 0 ? 'no holder' : holders === 1 ? '1 holder' : `${holders} holders`,
    timeline.failovers.length === 1 ? '1 failover' : `${timeline.failovers.length} failovers`,
  ];
  if (free.length > 0 && holders > 0) {
    const longest = Math.max(...free.map((g) => g.to - g.from));
    parts.push(`longest time without a holder ${seconds(longest)}`);
  }
  if (unobserved.length > 0) parts.push(`${unobserved.length === 1 ? '1 stretch' : `${unobserved.length} stretches`} not observed`);
  return parts.join(', ');
}

const seconds = (ms: number) => (ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 60_000)} min`);

// ------------------------------------------------------------------ token sequence

export type TokenPointKind = 'grant' | 'forced' | 'regression';

export type TokenPoint = {
  at: number;
  /** The exact token, as the API gave it. */
  token: string;
  /** For plotting only: above 2^53 neighbouring tokens may share a value. */
  value: number;
  kind: TokenPointKind;
  type: EventType;
  holder: string | null;
  previousToken: string | null;
};

const GRANTS: ReadonlySet<EventType> = new Set(['acquired', 'taken_over']);
const FORCED: ReadonlySet<EventType> = new Set(['force_expired', 'force_released']);
const DECIMAL = /^-?\d+$/;

/**
 * The fencing tokens the events show, oldest first: every grant's token, every forced bump
 * (the token a force-expire raised the counter to; the one it ended, when it reports none),
 * and every regression the collector flagged. A grant whose token is lower than one seen
 * before it is also a regression, compared exactly (tokens may exceed 2^53).
 */
export function tokenPoints(events: readonly TimelineEvent[]): TokenPoint[] {
  const points: TokenPoint[] = [];
  let highest: bigint | null = null;
  for (const event of events) {
    const at = Date.parse(event.at);
    if (Number.isNaN(at)) continue;
    let kind: TokenPointKind;
    let token: string | null;
    if (GRANTS.has(event.type)) {
      kind = 'grant';
      token = event.token;
    } else if (FORCED.has(event.type)) {
      kind = 'forced';
      token = event.token ?? event.previousToken;
    } else if (event.type === 'token_regression') {
      kind = 'regression';
      token = event.token;
    } else continue;
    if (token === null || !DECIMAL.test(token)) continue;
    const exact = BigInt(token);
    if (kind === 'grant' && highest !== null && exact < highest) kind = 'regression';
    if (kind !== 'regression' && (highest === null || exact > highest)) highest = exact;
    // The collector reports a regression as its own event beside the grant: one point, in red.
    const twin = points.at(-1);
    if (twin && twin.token === token && twin.holder === event.holder && (twin.kind === 'regression' || kind === 'regression') && Math.abs(twin.at - at) < 60_000) {
      twin.kind = 'regression';
      continue;
    }
    points.push({ at, token, value: Number(token), kind, type: event.type, holder: event.holder, previousToken: event.previousToken });
  }
  return points;
}

/** "12 grants, tokens 1 → 57, no regression" (exact tokens, compared as integers). */
export function tokenSummary(points: readonly TokenPoint[]): string {
  if (points.length === 0) return 'no grants with a fencing token in this range';
  // A regression is a grant too (one that should not have happened): counted in both.
  const grants = points.filter((p) => p.kind !== 'forced').length;
  const forced = points.filter((p) => p.kind === 'forced').length;
  const regressions = points.filter((p) => p.kind === 'regression').length;
  let low = BigInt(points[0]!.token);
  let high = low;
  for (const p of points) {
    const t = BigInt(p.token);
    if (t < low) low = t;
    if (t > high) high = t;
  }
  const parts = [grants === 1 ? '1 grant' : `${grants} grants`];
  if (forced > 0) parts.push(forced === 1 ? '1 forced bump' : `${forced} forced bumps`);
  parts.push(low === high ? `token ${low}` : `tokens ${low} → ${high}`);
  parts.push(regressions === 0 ? 'no regression' : regressions === 1 ? '1 regression' : `${regressions} regressions`);
  return parts.join(', ');
}
