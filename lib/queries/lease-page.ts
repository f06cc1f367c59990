// One page of the lease list (GET /api/v1/leases), chosen from the in-memory list of
// lease-cache.ts: filtered, sorted and cut by the server, so that a console or a CLI never has
// to fetch 100,000 leases to show twenty. The orders are the overview's own
// (lib/domain/overview.ts overviewRows), so a page is what the console would show at that place.
import type { LeaseView } from '../domain/types';
import { countLeases, leaseHealth, type LeaseCounters } from '../domain/health';
import { overviewRows, type Sort } from '../domain/overview';
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

/** A page in one of the overview's other orders, from the offset its cursor holds. */
function pageBySort(order: readonly string[], entries: ReadonlyMap<string, Entry>, filter: LeasePageFilter, sort: Exclude<Sort, 'key'>, limit: number, now: number): LeasePage {
  const matches = matcher(filter);
  const leases: (LeaseView & { localExpiresAt: number | null })[] = [];
  for (const id of order) {
    const entry = entries.get(id);
    if (!entry || !matches(entry)) continue;
    const live = entry.live && entry.expiresAtMs !== null;
    // The time left, as the overview sorts it: an expiry on this server's clock.
    leases.push({ ...viewOf(entry), localExpiresAt: live ? now + Math.max(0, entry.expiresAtMs! - now) : null });
  }
  const { rows } = overviewRows(leases, { source: null, state: 'all', text: '', sort }, new Set());
  const ordered: string[] = [];
  for (const row of rows) if (row.type === 'lease') ordered.push(row.lease.id);
  const offset = filter.cursor?.kind === 'offset' ? filter.cursor.offset : 0;
  const ids = ordered.slice(offset, offset + limit);
  return { ids, total: ordered.length, next: offset + limit < ordered.length ? encodeOffset(sort, offset + limit) : null };
}

/** The page `filter` asks for, from the list's `entries` in (source, key) `order`, at `now`. */
export function leasePage(order: readonly string[], entries: ReadonlyMap<string, Entry>, filter: LeasePageFilter, now: number): LeasePage {
  const limit = filter.limit ?? 10_000;
  const sort = filter.sort ?? 'key';
  return sort === 'key' ? pageByKey(order, entries, filter, limit) : pageBySort(order, entries, filter, sort, limit, now);
}
