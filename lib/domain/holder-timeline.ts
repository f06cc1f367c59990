// Who held a lease when, over a time range, from its events: the holder timeline and the
// token sequence of the lease page. Pure: events, the current lease and the range come in
// as arguments (times in epoch ms), nothing is read from a clock.
//
// The events are taken as the collector stored them (oldest first, by id), not re-sorted by
// time: an `expired` is stored at the old grant's estimated expiry and the `acquired` that
// follows it at the new grant's estimated start, and their order is the one that happened.
import { FORCE_EVENT_TYPES, type ForceEventType } from './admin-actions';
import { formatDuration } from './duration';
import type { EventType, LeaseEventView, LeaseView } from './types';

// The token sequence, in a file of its own; exported from here as well.
export { tokenPoints, tokenSummary, type TokenPoint, type TokenPointKind } from './token-sequence';

export type TimelineEvent = Pick<LeaseEventView, 'type' | 'at' | 'holder' | 'previousHolder' | 'token' | 'previousToken' | 'gapMs' | 'detail'>;
export type TimelineLease = Pick<LeaseView, 'state' | 'holder' | 'token' | 'acquiredAt' | 'observedAt' | 'stale'>;

/** How a holder's segment ended within the range: by an event, by the lease's current state, or not at all (null: still held). */
export type SegmentEnd = 'released' | 'expired' | 'taken_over' | ForceEventType | 'observation_gap' | 'replaced';

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

const ENDS: ReadonlySet<EventType> = new Set(['released', 'expired', ...FORCE_EVENT_TYPES]);

function gapTimes(event: TimelineEvent, at: number): { lastSeen: number; seenAgain: number } {
  const detail = (event.detail ?? {}) as { lastSeenAt?: unknown; seenAgainAt?: unknown };
  const parse = (value: unknown) => (typeof value === 'string' && !Number.isNaN(Date.parse(value)) ? Date.parse(value) : null);
  const seenAgain = parse(detail.seenAgainAt) ?? at;
  return { lastSeen: Math.min(parse(detail.lastSeenAt) ?? seenAgain, seenAgain), seenAgain };
}

/** The timeline of holderTimeline as it is drawn, one event after another. */
class TimelineWalk {
  readonly segments: HolderSegment[] = [];
  readonly unobserved: TimelineGap[] = [];
  readonly failovers: TimelineFailover[] = [];
  open: HolderSegment | null = null;
  /** The last segment that ended, for pairing an end with the next acquisition. */
  ended: HolderSegment | null = null;
  cursor: number; // time never runs backwards along the timeline

  constructor(
    readonly start: number,
    readonly end: number,
  ) {
    this.cursor = start;
  }

  clip(t: number): number {
    return Math.min(this.end, Math.max(this.start, t));
  }

  /** Step 1: the holder at `start`, from the first relevant event, or else from the current lease. */
  holderAtStart(first: TimelineEvent | undefined, lease: TimelineLease | null) {
    const { start } = this;
    if (first) {
      const before = first.type === 'observation_gap' ? (((first.detail ?? {}) as { before?: { holder?: string | null; token?: string | null } }).before ?? null) : null;
      const holder = first.type === 'acquired' ? null : (before?.holder ?? first.previousHolder);
      const token = before ? (before.token ?? first.previousToken) : first.previousToken;
      if (holder) this.open = { holder, token, from: start, to: start, startsBeforeRange: true, endedBy: null };
    } else if (lease?.state === 'held' && lease.holder) {
      const acquired = lease.acquiredAt ? Date.parse(lease.acquiredAt) : Number.NaN;
      const from = Number.isNaN(acquired) ? start : this.clip(acquired);
      this.open = { holder: lease.holder, token: lease.token, from, to: from, startsBeforeRange: from === start, endedBy: null };
    }
  }

  close(at: number, endedBy: SegmentEnd) {
    const open = this.open;
    if (!open) return;
    open.to = Math.max(open.from, at);
    open.endedBy = endedBy;
    this.segments.push(open);
    this.ended = open;
    this.open = null;
  }

  begin(holder: string, token: string | null, at: number, cause: SegmentEnd | null, gapMs: number | null) {
    const previous = this.open ?? this.ended;
    if (this.open) this.close(at, 'replaced');
    if (previous && previous.holder !== holder) {
      this.failovers.push({ at, from: previous.holder, to: holder, cause: cause ?? previous.endedBy ?? 'replaced', gapMs });
    }
    this.open = { holder, token, from: at, to: at, startsBeforeRange: false, endedBy: null };
    this.ended = null;
  }

  /** Step 2: one event closes the open segment and/or opens the next one. */
  event(event: TimelineEvent) {
    const raw = Date.parse(event.at);
    if (Number.isNaN(raw)) return;
    const at = this.clip(Math.max(this.cursor, raw));
    this.cursor = at;
    if (event.type === 'acquired') this.acquired(event, at);
    else if (event.type === 'taken_over') this.takenOver(event, at);
    else if (ENDS.has(event.type)) this.close(at, event.type as SegmentEnd);
    else if (event.type === 'observation_gap') this.observationGap(event, at);
  }

  private acquired(event: TimelineEvent, at: number) {
    if (!event.holder) return;
    // Paired with how the previous grant ended; the collector measured the gap.
    const last = this.ended;
    if (!this.open && !last && this.segments.length === 0 && (event.detail as { firstSeen?: unknown } | null)?.firstSeen === true && at > this.start) {
      // Leasehold started watching here: before it, nothing is known (not "free").
      this.unobserved.push({ from: this.start, to: at, kind: 'unobserved' });
    }
    const gapMs = event.gapMs ?? (last ? Math.max(0, at - last.to) : null);
    this.begin(event.holder, event.token, at, last?.endedBy ?? null, gapMs);
  }

  private takenOver(event: TimelineEvent, at: number) {
    if (!event.holder) return;
    if (!this.open && !this.ended && event.previousHolder) {
      // The previous holder's grant is older than anything the range shows.
      this.open = { holder: event.previousHolder, token: event.previousToken, from: this.start, to: this.start, startsBeforeRange: true, endedBy: null };
    }
    if (this.open) this.close(at, 'taken_over');
    this.begin(event.holder, event.token, at, 'taken_over', 0);
  }

  private observationGap(event: TimelineEvent, at: number) {
    const { lastSeen, seenAgain } = gapTimes(event, at);
    const from = this.clip(Math.max(lastSeen, this.open?.from ?? this.start));
    const to = Math.max(from, at);
    const previous = this.open ?? this.ended;
    this.close(from, 'observation_gap');
    if (to > from) this.unobserved.push({ from, to, kind: 'unobserved' });
    this.cursor = Math.max(this.cursor, this.clip(seenAgain));
    if (event.holder) {
      if (previous && previous.holder !== event.holder) this.failovers.push({ at: to, from: previous.holder, to: event.holder, cause: 'observation_gap', gapMs: null });
      this.open = { holder: event.holder, token: event.token, from: to, to, startsBeforeRange: false, endedBy: null };
      this.ended = null;
    }
  }

  /** Step 3: the current lease, which may be ahead of the events. */
  currentLease(lease: TimelineLease) {
    const { cursor, end } = this;
    const observed = this.clip(Date.parse(lease.observedAt) || end);
    if (lease.state === 'held' && lease.holder) {
      const open = this.open;
      if (!open || open.holder !== lease.holder || open.token !== lease.token) {
        const acquired = lease.acquiredAt ? Date.parse(lease.acquiredAt) : Number.NaN;
        const at = this.clip(Math.max(cursor, Number.isNaN(acquired) ? cursor : acquired));
        const last = this.ended;
        this.begin(lease.holder, lease.token, at, last?.endedBy ?? null, last ? Math.max(0, at - last.to) : null);
      }
    } else if (this.open && !lease.stale) {
      // The events have not caught up with the end of this grant yet.
      this.close(Math.max(cursor, observed), lease.state === 'expired' ? 'expired' : 'released');
    }
    // Step 4: a stale lease is known only until its last read.
    if (lease.stale && observed < end) {
      if (this.open) {
        this.open.to = Math.max(this.open.from, observed);
        this.segments.push(this.open);
        this.open = null;
      }
      this.unobserved.push({ from: observed, to: end, kind: 'unobserved' });
    }
  }

  /** A segment still open is held to the end of the range. */
  finish() {
    if (this.open) {
      this.open.to = this.end;
      this.segments.push(this.open);
    }
  }
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
  const walk = new TimelineWalk(start, end);
  const relevant = events.filter((e) => e.type !== 'renewed' && e.type !== 'source_down' && e.type !== 'source_up' && e.type !== 'token_regression');
  // Step 1: who held it when the range began.
  walk.holderAtStart(relevant[0], lease);
  // Step 2: walk the events.
  for (const event of relevant) walk.event(event);
  // Steps 3 and 4: the current lease, which may be ahead of the events, or stale.
  if (lease) walk.currentLease(lease);
  walk.finish();
  // Step 5: free time is what neither a holder nor an unobserved stretch covers.
  const { segments, unobserved, failovers } = walk;
  const gaps = withFreeGaps(segments, unobserved, start, end);
  return { start, end, segments: segments.filter((s) => s.to > s.from || s.endedBy === null), gaps, failovers };
}

/** The unobserved stretches and the free time between everything covered, in order of time (step 5). */
function withFreeGaps(segments: readonly HolderSegment[], unobserved: readonly TimelineGap[], start: number, end: number): TimelineGap[] {
  const covered = [...segments.map((s) => ({ from: s.from, to: s.to })), ...unobserved].filter((c) => c.to > c.from).sort((a, b) => a.from - b.from);
  const gaps: TimelineGap[] = [...unobserved];
  let at = start;
  for (const c of covered) {
    if (c.from > at) gaps.push({ from: at, to: c.from, kind: 'free' });
    at = Math.max(at, c.to);
  }
  if (at < end) gaps.push({ from: at, to: end, kind: 'free' });
  gaps.sort((a, b) => a.from - b.from);
  return gaps;
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
    parts.push(`longest time without a holder ${formatDuration(longest)}`);
  }
  if (unobserved.length > 0) parts.push(`${unobserved.length === 1 ? '1 stretch' : `${unobserved.length} stretches`} not observed`);
  return parts.join(', ');
}

