// One page of the lease list (GET /api/v1/leases), chosen from the in-memory list of
// lease-cache.ts: filtered, sorted and cut by the server, so that a console or a CLI never has
// to fetch 100,000 leases to show twenty. The orders are the overview's own
// (lib/domain/overview.ts overviewRows; lease-page.test.ts holds them to it), so a page is what
// the console would show at that place.
import type { LeaseView } from '../domain/types';
import { countLeases, leaseHealth, problemRank, type LeaseCounters } from '../domain/health';
import { compareTokens, type Sort } from '../domain/overview';
import { encodeAfter, encodeOffset, KEY_CHARS, keyDigest, type LeaseCursor } from '../api/lease-cursor';
import type { LEASE_LIST_STATES } from '../api/query-schemas';
import type { Entry } from './lease-list-bytes';

export type LeaseListState = (typeof LEASE_LIST_STATES)[number];

/** What GET /api/v1/leases asks for (lib/api/query-schemas.ts leasesQuery). */
export type LeasePageFilter = { source?: string; state?: LeaseListState; q?: string; sort?: Sort; cursor?: LeaseCursor; limit?: number };

export type LeasePage = { ids: string[]; total: number; next: string | null };

/** Every lease's counters: held, free, expired (not stale), stale, unknown, with problems (the overview's counters). */
export type StateCounts = LeaseCounters & { unknown: number };

/** The view with its changes of hands in the last hour counted, as health and the orders read it. */
const viewOf = (entry: Entry): LeaseView => (entry.view.recentTransitions === entry.transitions.length ? entry.view : { ...entry.view, recentTransitions: entry.transitions.length });

export function stateCounts(entries: Iterable<Entry>): StateCounts {
  const views: LeaseView[] = [];
  let unknown = 0;
  for (const entry of entries) {
    views.push(viewOf(entry));
    if (!entry.view.stale && entry.view.state === 'unknown') unknown++;
  }
  return { ...countLeases(views), unknown };
}

function matcher(filter: LeasePageFilter): (entry: Entry) => boolean {
  const q = filter.q?.toLowerCase();
  const { source, state } = filter;
  return (entry) => {
    const view = entry.view;
    if (source !== undefined && view.source !== source) return false;
    if (q && !view.key.toLowerCase().includes(q) && !view.holder?.toLowerCase().includes(q) && !view.lastHolder?.toLowerCase().includes(q)) return false;
    if (state === undefined) return true;
    if (state === 'stale') return view.stale;
    if (state === 'problems') return leaseHealth(viewOf(entry)).problems.length > 0;
    return view.state === state;
  };
}

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Where a page after `cursor` starts in `order` (ids in (source, key) order). */
function startAfter(order: readonly string[], entries: ReadonlyMap<string, Entry>, cursor: Extract<LeaseCursor, { kind: 'after' }>): number {
  const keyOf = (i: number) => entries.get(order[i]!)!.view;
  // The first lease at or past (source, keyStart), found by halving.
  let low = 0;
  let high = order.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    const view = keyOf(mid);
    if ((compareText(view.source, cursor.source) || compareText(view.key, cursor.keyStart)) < 0) low = mid + 1;
    else high = mid;
  }
  if (cursor.digest === null) {
    // The whole key: start past it if it is still there.
    return low < order.length && keyOf(low).source === cursor.source && keyOf(low).key === cursor.keyStart ? low + 1 : low;
  }
  // A long key: past the lease with that digest among those sharing the start. Gone: from the
  // first of them, so a lease may be sent again but none is skipped.
  for (let i = low; i < order.length; i++) {
    const view = keyOf(i);
    if (view.source !== cursor.source || !view.key.startsWith(cursor.keyStart)) break;
    if (view.key.length > KEY_CHARS && keyDigest(view.key) === cursor.digest) return i + 1;
  }
  return low;
}

/** A page in (source, key) order: every match counted, `limit` of them from the cursor on. */
function pageByKey(order: readonly string[], entries: ReadonlyMap<string, Entry>, filter: LeasePageFilter, limit: number): LeasePage {
  const matches = matcher(filter);
  const start = filter.cursor?.kind === 'after' ? startAfter(order, entries, filter.cursor) : 0;
  const ids: string[] = [];
  let total = 0;
  let more = false;
  for (let i = 0; i < order.length; i++) {
    const entry = entries.get(order[i]!);
    if (!entry || !matches(entry)) continue;
    total++;
    if (i < start) continue;
    if (ids.length < limit) ids.push(order[i]!);
    else more = true;
  }
  const last = ids.length ? entries.get(ids.at(-1)!)!.view : null;
  return { ids, total, next: more && last ? encodeAfter(last.source, last.key) : null };
}

/** The overview's orders within a source (lib/domain/overview.ts overviewRows), as sort keys computed once per lease. */
const holderCollator = new Intl.Collator();
type Keyed = { id: string; n: number; s: string | null };
const SORT_KEYS: Record<Exclude<Sort, 'key'>, (id: string, entry: Entry, now: number) => Keyed> = {
  problems: (id, entry) => ({ id, n: problemRank(leaseHealth(viewOf(entry))), s: null }),
  // Soonest expiry first: no countdown last.
  remaining: (id, entry, now) => ({ id, n: entry.live && entry.expiresAtMs !== null ? Math.max(now, entry.expiresAtMs) : Infinity, s: null }),
  token: (id, entry) => ({ id, n: 0, s: entry.view.token }),
  holder: (id, entry) => ({ id, n: 0, s: entry.view.holder }),
  transitions: (id, entry) => ({ id, n: -entry.transitions.length, s: null }),
};
const SORT_COMPARE: Record<Exclude<Sort, 'key'>, (a: Keyed, b: Keyed) => number> = {
  problems: (a, b) => a.n - b.n,
  remaining: (a, b) => (a.n === b.n ? 0 : a.n < b.n ? -1 : 1),
  token: (a, b) => compareTokens(a.s, b.s),
  holder: (a, b) => holderCollator.compare(a.s ?? '\uffff', b.s ?? '\uffff'),
  transitions: (a, b) => a.n - b.n,
};

/**
 * The matching leases in one of the overview's other orders: grouped by source (the source
 * with the most worrying lease first when sorting by problems, else by name), then by the
 * order's key. `order` is by (source, key) and the sort is stable: ties stay in key order, as
 * overviewRows breaks them. Keys are computed once per lease (not in every comparison).
 */
export function sortedIds(order: readonly string[], entries: ReadonlyMap<string, Entry>, filter: LeasePageFilter, sort: Exclude<Sort, 'key'>, now: number): string[] {
  const matches = matcher(filter);
  const keyOf = SORT_KEYS[sort];
  const groups = new Map<string, Keyed[]>();
  for (const id of order) {
    const entry = entries.get(id);
    if (!entry || !matches(entry)) continue;
    let group = groups.get(entry.view.source);
    if (!group) groups.set(entry.view.source, (group = []));
    group.push(keyOf(id, entry, now));
  }
  const ordered = [...groups.entries()].map(([source, group]) => {
    group.sort(SORT_COMPARE[sort]);
    return { source, group, best: sort === 'problems' ? (group[0]?.n ?? Infinity) : 0 };
  });
  ordered.sort((a, b) => a.best - b.best || compareText(a.source, b.source));
  return ordered.flatMap(({ group }) => group.map((keyed) => keyed.id));
}

/** Orders sorted lately, by sort and filter: reused for SORTED_FOR_MS (ordering 100,000 leases takes about 100 ms). */
export type SortedMemo = Map<string, { at: number; ids: string[] }>;
const SORTED_FOR_MS = 1_000;
const MEMO_MAX = 64;

function sortedFor(order: readonly string[], entries: ReadonlyMap<string, Entry>, filter: LeasePageFilter, sort: Exclude<Sort, 'key'>, now: number, memo?: SortedMemo): string[] {
  const key = JSON.stringify([sort, filter.source ?? null, filter.state ?? null, filter.q?.toLowerCase() ?? null]);
  const kept = memo?.get(key);
  // Within the second, the order as it was (leases gone since are left out; new ones come in the next second's).
  if (kept && now - kept.at >= 0 && now - kept.at < SORTED_FOR_MS) return kept.ids.filter((id) => entries.has(id));
  const ids = sortedIds(order, entries, filter, sort, now);
  if (memo) {
    if (memo.size >= MEMO_MAX) memo.clear();
    memo.set(key, { at: now, ids });
  }
  return ids;
}

/** A page in one of the overview's other orders, from the offset its cursor holds. */
function pageBySort(order: readonly string[], entries: ReadonlyMap<string, Entry>, filter: LeasePageFilter, sort: Exclude<Sort, 'key'>, limit: number, now: number, memo?: SortedMemo): LeasePage {
  const ordered = sortedFor(order, entries, filter, sort, now, memo);
  const offset = filter.cursor?.kind === 'offset' ? filter.cursor.offset : 0;
  const ids = ordered.slice(offset, offset + limit);
  return { ids, total: ordered.length, next: offset + limit < ordered.length ? encodeOffset(sort, offset + limit) : null };
}

/** The page `filter` asks for, from the list's `entries` in (source, key) `order`, at `now`; `memo`: orders sorted lately, kept by the caller. */
export function leasePage(order: readonly string[], entries: ReadonlyMap<string, Entry>, filter: LeasePageFilter, now: number, memo?: SortedMemo): LeasePage {
  const limit = filter.limit ?? 10_000;
  const sort = filter.sort ?? 'key';
  return sort === 'key' ? pageByKey(order, entries, filter, limit) : pageBySort(order, entries, filter, sort, limit, now, memo);
}
