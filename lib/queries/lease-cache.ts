// The lease list, served from memory. Reading 10,000 rows through Prisma and serializing them
// takes about 300 ms; the console and the CLI ask for the whole list on every page load.
// So this process keeps the list: loaded from the store once, kept current by the live bus
// (its own collector's writes, and other collectors' through the relay), and read again from
// the store in the background when it is older than REFRESH_MS, which also catches what the
// bus does not carry (stale marking of a whole source, deletions, the hour window moving on).
//
// Each lease is kept (lease-list-bytes.ts) as UTF-8 JSON split around `remainingMs`, the one field that depends on
// the moment of the request: a response is a copy of bytes, not serialization or encoding.
// The whole list (no filter, the console's and the CLI's request) is kept assembled as well,
// in chunks of CHUNK leases, each with a blank slot of fixed width where remainingMs goes: a
// request copies the chunks and writes the digits into the slots (the rest of a slot stays
// spaces, which JSON allows after a value). An update rebuilds only its lease's chunk.
import 'server-only';
import type { Store } from '../db';
import type { Root } from '../root';
import { part } from '../parts';
import type { LeaseView } from '../domain/types';
import { leavesWindowAt, recentChangesOfHands, recentSince, RECENT_WINDOW_MS, stillRecent } from '../domain/recent-changes';
import { applyToLease, listChangeOf } from '../domain/lease-list';
import { changeEventsSince, readLeaseViews } from '../db/leases';
import { leasePage, stateCounts, type LeasePageFilter, type SortedMemo, type StateCounts } from './lease-page';
import { assemble, CHUNK, COMMA, entryOf, NULL, remainingOf, wholeList, type Chunk, type Entry } from './lease-list-bytes';
import { systemClock } from '../time/clock';

const REFRESH_MS = 15_000;

type Cache = {
  entries: Map<string, Entry>;
  /** Ids in (source, key) order; rebuilt when a lease appears. */
  order: string[] | null;
  /** Leases per source, counted with order; per state, counted when asked after a change. */
  counts: Map<string, number>;
  states: StateCounts | null;
  /** When states was counted: counted again at most once a second (health for every lease). */
  statesAt: number;
  /** Orders other than by key, sorted in the last second (lease-page.ts). */
  sorted: SortedMemo;
  /** The whole list in order, CHUNK leases each, and which chunk holds which lease; with order. */
  chunks: Chunk[] | null;
  chunkOf: Map<string, Chunk>;
  /** When the oldest change of hands counted leaves the hour (0: not known, look). */
  pruneAt: number;
  loadedAt: number;
  loading: Promise<void> | null;
  /** Bus updates that arrived while a load was reading the store: they are newer than it. */
  sinceLoad: Map<string, Entry> | null;
  unsubscribe: () => void;
};

/** What the cache needs of its composition root (lib/root): the bus it follows, and the relay that feeds it other processes' changes. */
export type LeaseCacheRoot = Pick<Root, 'bus' | 'part' | 'ensureRelay'>;

/** The cache of each store a root serves from (one, but a test's root may serve two); unsubscribed when the root closes. */
const LEASE_CACHES = part(
  'lease list cache',
  () => new Map<Store, Cache>(),
  (caches) => {
    for (const cache of caches.values()) cache.unsubscribe();
    caches.clear();
  },
);

async function load(store: Store, cache: Cache) {
  cache.sinceLoad = new Map();
  try {
    await read(store, cache, cache.sinceLoad);
  } finally {
    cache.sinceLoad = null;
  }
}

async function read(store: Store, cache: Cache, sinceLoad: Map<string, Entry>) {
  const [views, events] = await Promise.all([readLeaseViews(store, 'all'), changeEventsSince(store, new Date(recentSince(systemClock.wall())))]);
  const now = systemClock.wall();
  const transitions = recentChangesOfHands(events, now);
  const entries = new Map<string, Entry>();
  for (const view of views) entries.set(view.id, entryOf(view, transitions.get(view.id) ?? []));
  // What the bus said while the store was being read is newer than what was read.
  for (const [id, entry] of sinceLoad) entries.set(id, entry);
  cache.entries = entries;
  cache.order = null;
  cache.chunks = null;
  cache.states = null;
  cache.pruneAt = 0;
  cache.loadedAt = now;
}

function setEntry(cache: Cache, id: string, entry: Entry) {
  cache.entries.set(id, entry);
  const chunk = cache.chunkOf.get(id);
  if (chunk) chunk.buf = null;
}

/** Drops the changes of hands that fell out of the hour, when some did. */
function pruneHour(cache: Cache, now: number) {
  if (cache.pruneAt > now) return;
  let next = Infinity;
  for (const [id, entry] of cache.entries) {
    const transitions = stillRecent(entry.transitions, now);
    if (transitions !== entry.transitions) setEntry(cache, id, entryOf(entry.view, transitions));
    next = Math.min(next, leavesWindowAt(transitions));
  }
  cache.pruneAt = next;
}

function orderOf(cache: Cache): string[] {
  if (!cache.order) {
    cache.order = [...cache.entries.values()]
      .sort((a, b) => (a.view.source < b.view.source ? -1 : a.view.source > b.view.source ? 1 : a.view.key < b.view.key ? -1 : a.view.key > b.view.key ? 1 : 0))
      .map((entry) => entry.view.id);
    cache.chunks = null;
    cache.counts = new Map();
    for (const entry of cache.entries.values()) cache.counts.set(entry.view.source, (cache.counts.get(entry.view.source) ?? 0) + 1);
  }
  return cache.order;
}

/** The whole list, its chunks assembled. */
function chunksOf(cache: Cache, now: number): Chunk[] {
  const order = orderOf(cache);
  if (!cache.chunks) {
    cache.chunks = [];
    cache.chunkOf = new Map();
    for (let i = 0; i < order.length; i += CHUNK) {
      const chunk: Chunk = { ids: order.slice(i, i + CHUNK), buf: null, slots: [] };
      for (const id of chunk.ids) cache.chunkOf.set(id, chunk);
      cache.chunks.push(chunk);
    }
  }
  for (const chunk of cache.chunks) if (!chunk.buf) assemble(cache.entries, chunk, now);
  return cache.chunks;
}

function cacheFor(root: LeaseCacheRoot, store: Store): Cache {
  const caches = root.part(LEASE_CACHES);
  let cache = caches.get(store);
  if (cache) return cache;
  const created: Cache = { entries: new Map(), order: null, counts: new Map(), states: null, statesAt: 0, sorted: new Map(), chunks: null, chunkOf: new Map(), pruneAt: 0, loadedAt: 0, loading: null, sinceLoad: null, unsubscribe: () => {} };
  const update = (id: string, entry: Entry) => {
    if (!created.entries.has(id)) {
      created.order = null;
      created.chunks = null;
    }
    setEntry(created, id, entry);
    created.sinceLoad?.set(id, entry);
  };
  cache = created;
  caches.set(store, created);
  root.ensureRelay(store);
  // Each source's status as the bus last told it (stale: down): most source messages only move
  // its last read (about one a second), and only a change of status marks leases and reloads.
  const toldStale = new Map<string, boolean>();
  created.unsubscribe = root.bus.subscribe((message) => {
    if (created.loadedAt === 0 && !created.sinceLoad) return; // not loading yet: the first load will see it
    // What the message does to the list is lib/domain/lease-list.ts's rule, as in the browser;
    // this cache keeps the times of changes of hands (for the hour window) beside each view.
    const change = listChangeOf(message);
    const entryOfId = (id: string) => created.sinceLoad?.get(id) ?? created.entries.get(id);
    if (change.kind === 'replace') {
      const previous = entryOfId(change.lease.id);
      update(change.lease.id, entryOf(applyToLease(previous?.view, change)!, previous?.transitions ?? []));
    } else if (change.kind === 'change_of_hands') {
      const entry = entryOfId(change.leaseId);
      if (entry) update(change.leaseId, entryOf(entry.view, [...entry.transitions, change.atMs]));
      if (created.pruneAt !== 0) created.pruneAt = Math.min(created.pruneAt, change.atMs + RECENT_WINDOW_MS);
    } else if (change.kind === 'source_status' && toldStale.get(change.source) !== change.stale) {
      toldStale.set(change.source, change.stale);
      // A source going down marks all its leases stale, coming back unmarks them (the store
      // does the same in the write this message follows): done here at once, so the list is
      // current up to this message, as its position says. Then the leases are read again,
      // for what else the store knows (their last reads).
      const marked = (entries: Map<string, Entry>) => {
        for (const [id, entry] of entries) {
          const view = applyToLease(entry.view, change)!;
          if (view !== entry.view) update(id, entryOf(view, entry.transitions));
        }
      };
      marked(created.entries);
      if (created.sinceLoad) marked(created.sinceLoad);
      created.loadedAt = 1;
    }
  }).unsubscribe;
  return created;
}

/** Loads the cache the first time (waiting for it), and refreshes it in the background when old. */
async function fresh(root: LeaseCacheRoot, store: Store): Promise<Cache> {
  const cache = cacheFor(root, store);
  const refresh = () =>
    (cache.loading ??= load(store, cache).finally(() => {
      cache.loading = null;
    }));
  if (cache.loadedAt === 0) await refresh();
  else if (systemClock.wall() - cache.loadedAt > REFRESH_MS) void refresh().catch(() => {}); // the next request sees the error, if it lasts
  return cache;
}

/**
 * A page of the lease list as UTF-8 JSON (an array), filtered and sorted as `filter` says
 * (lease-page.ts), with remainingMs as of now.
 */
export async function leaseListJson(
  root: LeaseCacheRoot,
  store: Store,
  filter: LeasePageFilter,
): Promise<{
  json: Buffer;
  total: number;
  truncated: boolean;
  /** the cursor of the next page, null on the last */
  next: string | null;
  /** all leases, per source */
  counts: ReadonlyMap<string, number>;
  /** all leases, per state */
  states: StateCounts;
  /** the live bus's position this list is current to (lib/live/bus.ts) */
  position: string;
}> {
  const cache = await fresh(root, store);
  const now = systemClock.wall();
  pruneHour(cache, now);
  const limit = filter.limit ?? 10_000;
  const order = orderOf(cache);
  if (!cache.states || now - cache.statesAt >= 1_000 || now < cache.statesAt) {
    cache.states = stateCounts(cache.entries.values());
    cache.statesAt = now;
  }
  const states = cache.states;
  const position = root.bus.position();
  if (!filter.source && !filter.state && !filter.q && !filter.cursor && (filter.sort ?? 'key') === 'key' && cache.entries.size <= limit) {
    let json = wholeList(chunksOf(cache, now), now);
    while (!json) json = wholeList(chunksOf(cache, now), now); // a slot was too narrow: its chunk was assembled again
    return { json, total: cache.entries.size, truncated: false, next: null, counts: cache.counts, states, position };
  }
  const page = leasePage(order, cache.entries, filter, now, cache.sorted);
  const parts: Buffer[] = [Buffer.from('[')];
  for (const [i, id] of page.ids.entries()) {
    const entry = cache.entries.get(id)!;
    if (i > 0) parts.push(COMMA);
    const remaining = remainingOf(entry, now);
    parts.push(entry.head, remaining === null ? NULL : Buffer.from(String(remaining)), entry.tail);
  }
  parts.push(Buffer.from(']'));
  return { json: Buffer.concat(parts), total: page.total, truncated: page.next !== null, next: page.next, counts: cache.counts, states, position };
}

/**
 * Every lease as it is now, in (source, key) order, at most `limit` of them: for the per-lease
 * series of /metrics (lib/queries/metrics.ts leaseMetrics). `total`: how many there are in all.
 */
export async function currentLeases(root: LeaseCacheRoot, store: Store, limit: number): Promise<{ leases: LeaseView[]; total: number }> {
  const cache = await fresh(root, store);
  const now = systemClock.wall();
  pruneHour(cache, now);
  const leases: LeaseView[] = [];
  for (const id of orderOf(cache)) {
    if (leases.length >= limit) break;
    const entry = cache.entries.get(id);
    if (!entry) continue;
    leases.push({
      ...entry.view,
      remainingMs: remainingOf(entry, now),
      recentTransitions: entry.transitions.length,
    });
  }
  return { leases, total: cache.entries.size };
}
