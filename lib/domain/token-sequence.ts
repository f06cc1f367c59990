// The token sequence of the lease page: the fencing tokens a lease's events show, oldest
// first, and its one-line summary. Split from lib/domain/holder-timeline.ts, which re-exports
// it; pure as that file is (events come in as arguments).
import { FORCE_EVENT_TYPES } from './admin-actions';
import type { EventType } from './types';
import type { TimelineEvent } from './holder-timeline';

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
const FORCED: ReadonlySet<EventType> = new Set(FORCE_EVENT_TYPES);
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

/** The lowest and highest token of a sequence, exactly (as integers); null for none. */
export function tokenRange(points: readonly Pick<TokenPoint, 'token'>[]): { low: bigint; high: bigint } | null {
  if (points.length === 0) return null;
  let low = BigInt(points[0]!.token);
  let high = low;
  for (const p of points) {
    const t = BigInt(p.token);
    if (t < low) low = t;
    if (t > high) high = t;
  }
  return { low, high };
}

/** "12 grants, tokens 1 → 57, no regression" (exact tokens, compared as integers). */
export function tokenSummary(points: readonly TokenPoint[]): string {
  if (points.length === 0) return 'no grants with a fencing token in this range';
  // A regression is a grant too (one that should not have happened): counted in both.
  const grants = points.filter((p) => p.kind !== 'forced').length;
  const forced = points.filter((p) => p.kind === 'forced').length;
  const regressions = points.filter((p) => p.kind === 'regression').length;
  const { low, high } = tokenRange(points)!;
  const parts = [grants === 1 ? '1 grant' : `${grants} grants`];
  if (forced > 0) parts.push(forced === 1 ? '1 forced bump' : `${forced} forced bumps`);
  parts.push(low === high ? `token ${low}` : `tokens ${low} → ${high}`);
  parts.push(regressions === 0 ? 'no regression' : regressions === 1 ? '1 regression' : `${regressions} regressions`);
  return parts.join(', ');
}
