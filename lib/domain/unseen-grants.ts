// Grants that came and went between two reads. A lock held for less time than it takes to
// read it after its keyspace event (5,000 short locks a second are) can be acquired and let
// go before any read sees it. Where the backend keeps a counter that is raised at each grant
// and only then (a Redis fence counter: Observation.issued), the tokens between the last one
// accounted for and the counter's value now are exactly those grants: they are recorded as
// one `unseen_grants` event (how many, first and last token, between which reads), so no
// acquisition is lost, and none is invented: who held them and for how long is not known.
//
// Counted only between two reads that were both made (not across an observation gap, where
// nothing between is claimed) and from a token already known (not at first sight). A fence
// raised by hand (a force-expire bumps it by one) counts as a grant too: the event says so.
import type { Step } from './observe';
import type { LeaseChange } from './tracked-lease';

const GRANT_TYPES: ReadonlySet<string> = new Set(['acquired', 'taken_over']);
/** The most the store's transitions column (a 32-bit integer) holds. */
const MAX_TRANSITIONS = 2_147_483_647;

/** Adds an `unseen_grants` event to the step when the counter passed tokens no read saw held. */
export function countUnseenGrants(s: Step, issued: bigint | undefined): void {
  if (issued === undefined || !s.prev || s.j.afterGap) return;
  const accounted = maxOf(s.prev.token, s.prev.lastToken);
  if (accounted === null) return;
  // The grant this read saw held (if any) is recorded already; those below it were unseen.
  const seenAt = s.changes.findIndex((c) => GRANT_TYPES.has(c.type) && c.token !== null && c.token > accounted);
  const seen = seenAt >= 0 ? s.changes[seenAt]! : null;
  // Held by a grant seen before, the counter has nothing more to say (its token is the counter's).
  if (!seen && s.next.holder !== null) return;
  const upper = seen ? seen.token! - 1n : issued;
  if (upper <= accounted) return;
  const count = upper - accounted;
  const event: LeaseChange = {
    type: 'unseen_grants',
    atWall: seen ? seen.atWall : s.read.startedWall,
    holder: null,
    previousHolder: null,
    token: upper,
    previousToken: accounted,
    gapMs: null,
    detail: {
      count: count <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(count) : count.toString(),
      firstToken: (accounted + 1n).toString(),
      lastToken: upper.toString(),
      betweenReads: { from: new Date(s.prev.observedAtWall).toISOString(), to: new Date(s.read.startedWall).toISOString() },
    },
  };
  // A fence set by hand to 20 digits is a count no integer column holds: kept within one.
  s.next.transitions = Math.min(MAX_TRANSITIONS, s.next.transitions + (count >= BigInt(MAX_TRANSITIONS) ? MAX_TRANSITIONS : Number(count)));
  if (seen) {
    // The grant seen now followed the unseen ones: its predecessor is the last of them, not
    // the holder seen before, and the time between is not known.
    s.changes.splice(seenAt, 0, event);
    seen.previousHolder = null;
    seen.previousToken = upper;
    seen.gapMs = null;
    seen.detail = { ...(seen.detail ?? {}), afterUnseenGrants: event.detail!.count };
    return;
  }
  s.changes.push(event);
  // Nobody holds it now: the last grant is the last unseen one, its holder and end unknown,
  // so the next acquisition is paired with nobody.
  s.next.lastHolder = null;
  s.next.lastToken = upper;
  s.next.ended = null;
}

function maxOf(a: bigint | null, b: bigint | null): bigint | null {
  if (a === null) return b;
  if (b === null) return a;
  return a > b ? a : b;
}
