// Pages of the lease list (lib/queries/lease-page.ts) and their cursors (lib/api/lease-cursor.ts):
// a walk over pages sends every lease once, in the overview's orders, whatever the keys.
import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeAfter, KEY_CHARS } from '../api/lease-cursor';
import { parseQuery } from '../api/params';
import { leasesQuery } from '../api/query-schemas';
import { overviewRows, type Sort } from '../domain/overview';
import type { LeaseView } from '../domain/types';
import { entryOf, type Entry } from './lease-list-bytes';
import { leasePage, stateCounts, type LeasePageFilter, type SortedMemo } from './lease-page';

const NOW = 1_800_000_000_000;

function view(source: string, key: string, over: Partial<LeaseView> = {}): LeaseView {
  return {
    id: `${source}/${key}`,
    source,
    key,
    backend: 'redis',
    kind: 'lock',
    state: 'held',
    holder: `w-${key.length % 7}`,
    lastHolder: null,
    token: String(key.length),
    fenced: true,
    ttlMs: 30_000,
    remainingMs: null,
    acquiredAt: null,
    renewedAt: null,
    expiresAt: new Date(NOW + (key.charCodeAt(0) % 20) * 1_000).toISOString(),
    observedAt: new Date(NOW).toISOString(),
    stale: false,
    candidates: [],
    transitions: 1,
    recentTransitions: 0,
    lastIntervalMs: 10_000,
    lastMarginMs: 20_000,
    problem: null,
    detail: null,
    ...over,
  };
}

function list(views: LeaseView[]) {
  const entries = new Map<string, Entry>(views.map((v) => [v.id, entryOf(v, [])]));
  const order = [...entries.values()]
    .sort((a, b) => (a.view.source < b.view.source ? -1 : a.view.source > b.view.source ? 1 : a.view.key < b.view.key ? -1 : a.view.key > b.view.key ? 1 : 0))
    .map((e) => e.view.id);
  return { entries, order };
}

/** Every page from the first, as a client walks them: the cursor goes through the query schema, as from a URL. */
function walk(l: ReturnType<typeof list>, filter: Omit<LeasePageFilter, 'cursor'>, between?: () => void) {
  const seen: string[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 1_000; pages++) {
    const parsed = cursor === null ? undefined : parseQuery(leasesQuery, new URLSearchParams({ cursor, ...(filter.sort ? { sort: filter.sort } : {}) })).cursor;
    const page = leasePage(l.order, l.entries, { ...filter, cursor: parsed }, NOW);
    seen.push(...page.ids);
    if (page.next === null) return { seen, total: page.total };
    cursor = page.next;
    between?.();
  }
  throw new Error('the walk did not end');
}

const views = [
  ...Array.from({ length: 57 }, (_, i) => view('redis-a', `order:${String(i).padStart(3, '0')}`)),
  ...Array.from({ length: 23 }, (_, i) => view('etcd-b', `shard/${i}`, { state: i % 5 === 0 ? 'expired' : 'held', holder: i % 5 === 0 ? null : 'w' })),
  // Keys longer than a cursor keeps, sharing their first KEY_CHARS characters.
  ...Array.from({ length: 9 }, (_, i) => view('redis-a', `${'x'.repeat(KEY_CHARS + 10)}${i}`)),
  view('redis-a', 'stale-one', { stale: true }),
  view('redis-a', 'ünïcødé 💥 "quoted"'),
];

describe('leasePage', () => {
  it.each([1, 7, 10, 50, 1_000])('sort=key, pages of %i: every lease once, in (source, key) order', (limit) => {
    const l = list(views);
    const { seen, total } = walk(l, { limit });
    expect(total).toBe(views.length);
    expect(seen).toEqual(l.order);
  });

  it.each<Sort>(['problems', 'remaining', 'token', 'holder', 'transitions'])('sort=%s: every lease once, in the overview order', (sort) => {
    const l = list(views);
    const whole = leasePage(l.order, l.entries, { sort, limit: 100_000 }, NOW).ids;
    expect(new Set(whole).size).toBe(views.length);
    expect(walk(l, { sort, limit: 6 }).seen).toEqual(whole);
  });

  it.each<Sort>(['problems', 'remaining', 'token', 'holder', 'transitions'])('sort=%s: the order overviewRows gives the console, exactly', (sort) => {
    const mixed = views.map((v, i) => ({ ...v, token: i % 4 === 0 ? null : String((i * 7919) % 1000), holder: i % 5 === 0 ? null : `w-${(i * 31) % 17}`, lastMarginMs: i % 9 === 0 ? 1_000 : 20_000 }));
    const l = list(mixed);
    for (const [i, id] of l.order.entries()) if (i % 6 === 0) l.entries.get(id)!.transitions.push(NOW - i * 1_000);
    const leases = l.order.map((id) => {
      const entry = l.entries.get(id)!;
      return { ...entry.view, recentTransitions: entry.transitions.length, localExpiresAt: entry.live && entry.expiresAtMs !== null ? entry.expiresAtMs : null };
    });
    const expected = overviewRows(leases, { source: null, state: 'all', text: '', sort }, new Set()).rows.flatMap((row) => (row.type === 'lease' ? [row.lease.id] : []));
    expect(leasePage(l.order, l.entries, { sort, limit: 100_000 }, NOW).ids).toEqual(expected);
  });

  it('an order sorted in the last second is used again (leases gone since left out), then sorted anew', () => {
    const l = list(views);
    const memo: SortedMemo = new Map();
    const first = leasePage(l.order, l.entries, { sort: 'token', limit: 3 }, NOW, memo).ids;
    l.entries.delete(first[0]!);
    l.entries.set('etcd-b/shard/0', entryOf(view('etcd-b', 'shard/0', { token: '999999' }), []));
    expect(leasePage(l.order, l.entries, { sort: 'token', limit: 2 }, NOW + 500, memo).ids).toEqual(first.slice(1, 3));
    expect(leasePage(l.order, l.entries, { sort: 'token', limit: 1 }, NOW + 1_000, memo).ids).toEqual(['etcd-b/shard/0']);
  });

  it('problems first, in groups by source as the overview shows them: the source with the worst lease first, its worst leases first', () => {
    const l = list(views);
    const all = leasePage(l.order, l.entries, { sort: 'problems', limit: 1_000 }, NOW).ids;
    expect(all.slice(0, 5).every((id) => l.entries.get(id)!.view.state === 'expired')).toBe(true);
    expect(all.slice(0, 23).every((id) => id.startsWith('etcd-b/'))).toBe(true);
    expect(all[23]).toBe('redis-a/stale-one');
  });

  it('filters count every match, not only the page', () => {
    const l = list(views);
    const expired = leasePage(l.order, l.entries, { state: 'expired', limit: 2 }, NOW);
    expect(expired.total).toBe(5);
    expect(expired.ids).toHaveLength(2);
    expect(expired.next).not.toBeNull();
    expect(leasePage(l.order, l.entries, { state: 'stale', limit: 10 }, NOW).ids).toEqual(['redis-a/stale-one']);
    expect(leasePage(l.order, l.entries, { state: 'problems', limit: 100 }, NOW).total).toBe(6);
    expect(leasePage(l.order, l.entries, { q: 'ÜNÏ', limit: 10 }, NOW).ids).toEqual(['redis-a/ünïcødé 💥 "quoted"']);
    expect(leasePage(l.order, l.entries, { source: 'etcd-b', q: 'shard/1', limit: 100 }, NOW).total).toBe(11);
  });

  it('leases that come and go between pages: none that stayed is skipped or sent twice', () => {
    const l = list(views);
    let added = 0;
    const { seen } = walk(l, { limit: 5 }, () => {
      // Each page: one lease removed ahead of the cursor, one added before it and one after it.
      const ahead = l.order.at(-1 - added)!;
      l.entries.delete(ahead);
      for (const key of [`a-new-${added}`, `zz-new-${added}`]) l.entries.set(`redis-a/${key}`, entryOf(view('redis-a', key), []));
      added++;
      Object.assign(l, list([...l.entries.values()].map((e) => e.view)));
    });
    const stayed = views.map((v) => v.id).filter((id) => l.entries.has(id));
    for (const id of stayed) expect(seen.filter((s) => s === id)).toHaveLength(1);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('a cursor after a long key that is gone starts at the first lease sharing its start: one may come again, none is skipped', () => {
    const l = list(views);
    const long = l.order.filter((id) => id.length > KEY_CHARS);
    const cursor = decodeCursor(encodeAfter('redis-a', l.entries.get(long[3]!)!.view.key))!;
    expect(leasePage(l.order, l.entries, { cursor, limit: 2 }, NOW).ids).toEqual(long.slice(4, 6));
    l.entries.delete(long[3]!);
    const order = l.order.filter((id) => id !== long[3]);
    expect(leasePage(order, l.entries, { cursor, limit: 2 }, NOW).ids).toEqual(long.slice(0, 2));
  });

  it('counts per state: held, free, expired, unknown apart from stale, and problems', () => {
    const l = list(views);
    expect(stateCounts(l.entries.values())).toEqual({ held: 85, free: 0, expired: 5, unknown: 0, stale: 1, problems: 6 });
  });
});

describe('the cursor parameter', () => {
  const refusal = (query: Record<string, string>) => {
    try {
      parseQuery(leasesQuery, new URLSearchParams(query));
      return null;
    } catch (error) {
      return (error as Error).message;
    }
  };

  it.each([
    ['not base64url', '%%%'],
    ['base64url of no JSON', Buffer.from('nope').toString('base64url')],
    ['JSON of another shape', Buffer.from('{"s":"a","k":"b","x":1}').toString('base64url')],
    ['an offset past any list', Buffer.from('{"o":1e12,"sort":"token"}').toString('base64url')],
    ['a prototype key', Buffer.from('{"__proto__":{"o":1},"s":"a","k":"b"}').toString('base64url')],
  ])('%s: a 400 naming the cursor', (_name, cursor) => {
    expect(refusal({ cursor })).toMatch(/^The query parameter "cursor" must be the "next" value of an earlier page/);
  });

  it('a cursor of one order is refused for another', () => {
    expect(refusal({ cursor: encodeAfter('a', 'b'), sort: 'token' })).toMatch(/"cursor" must be .* sorted the same way \(this cursor is for sort=key\)/);
    expect(refusal({ cursor: encodeAfter('a', 'b') })).toBeNull();
  });

  it('a cursor longer than any this server makes is refused before it is read', () => {
    expect(refusal({ cursor: 'A'.repeat(10_000) })).toMatch(/at most 8192 characters/);
  });
});
