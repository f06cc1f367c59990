// The lease list served from memory (lib/queries/lease-cache.ts) says exactly what the store
// says (lib/queries/leases.ts listLeases, the reference), for every filter, and follows the
// live bus between reads of the store.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../lib/db/store';
import type { LeaseView } from '../../lib/domain/types';
import { leaseListJson } from '../../lib/queries/lease-cache';
import { listLeases, type LeaseFilter } from '../../lib/queries/leases';
import { leaseMetrics } from '../../lib/queries/metrics';
import { createPostgresDatabase, type TestDatabase } from '../support/databases';
import { testRoot } from '../support/root';
import type { Root } from '../../lib/root';
import { parseQuery } from '../../lib/api/params';
import { leasesQuery } from '../../lib/api/query-schemas';
import { leaseListSchema } from '../../lib/domain/schemas';
import { leaseListReply } from '../../lib/queries/lease-list-reply';

let db: TestDatabase & { url: string };
let store: Store;
// The cache is a part of a composition root (lib/root), following its bus: this file's own.
let root: Root;
const publish: Root['bus']['publish'] = (message) => root.bus.publish(message);

beforeAll(async () => {
  db = await createPostgresDatabase('lh_leasecache');
  store = await openStore({ kind: 'postgres', url: db.url });
  root = testRoot(store);
  await store.withSql(async (sql) => {
    await sql.query(`INSERT INTO "Source" (name, backend, status, "lastGoodReadAt", "updatedAt") VALUES ('r', 'redis', 'up', now(), now()), ('e', 'etcd', 'down', now() - interval '1 minute', now())`);
    await sql.query(
      `INSERT INTO "Lease" (id, "sourceName", backend, kind, key, state, holder, "lastHolder", token, "lastToken", fenced, "ttlMs", "expiresAt", "observedAt", stale, candidates, "lastMarginMs", "updatedAt")
       VALUES ('r/a', 'r', 'redis', 'lock', 'a', 'held', 'Worker-1', NULL, 5, NULL, true, 30000, now() + interval '20 seconds', now() - interval '3 seconds', false, '[]', 20000, now()),
              ('r/b "quoted", \\ odd', 'r', 'redis', 'lock', 'b "quoted", \\ odd', 'free', NULL, 'worker-2', NULL, 7, true, 30000, NULL, now(), false, '[]', NULL, now()),
              ('r/c', 'r', 'redis', 'lock', 'c', 'held', 'worker-3', NULL, NULL, NULL, false, NULL, NULL, now(), false, '[]', NULL, now()),
              ('e/x', 'e', 'etcd', 'election', 'x', 'held', 'leader-1', NULL, 99, NULL, true, 10000, now() + interval '5 seconds', now(), true, '[{"holder":"c-2","token":"100"}]', NULL, now())`,
    );
    await sql.query(
      `INSERT INTO "LeaseEvent" ("leaseId", seq, type, at, holder, "previousHolder", token) VALUES
         ('r/a', 1, 'acquired', now() - interval '2 hours', 'w-0', NULL, 1),
         ('r/a', 2, 'taken_over', now() - interval '10 minutes', 'Worker-1', 'w-0', 5),
         ('r/a', 3, 'renewed', now() - interval '5 minutes', 'Worker-1', NULL, 5),
         ('e/x', 1, 'expired', now() - interval '70 seconds', NULL, 'leader-0', NULL),
         ('e/x', 2, 'acquired', now() - interval '1 minute', 'leader-1', 'leader-0', 99)`,
    );
    // The collector's first sighting of r/c: not a change of hands.
    await sql.query(`INSERT INTO "LeaseEvent" ("leaseId", seq, type, at, holder, detail) VALUES ('r/c', 1, 'acquired', now() - interval '2 minutes', 'worker-3', '{"firstSeen": true}')`);
  });
});
afterAll(async () => {
  await root.close(); // and the store
  await db.drop();
});

async function both(filter: LeaseFilter) {
  const [reference, cached] = await Promise.all([listLeases(store, filter), leaseListJson(root, store, filter)]);
  return { reference, cached: { ...cached, leases: JSON.parse(cached.json.toString('utf8')) as LeaseView[] } };
}

const withoutRemaining = (leases: LeaseView[]) => leases.map(({ remainingMs, ...rest }) => ({ ...rest, remaining: remainingMs === null ? null : 'some' }));

// First: the tests after this one change the list.
describe('series per lease on /metrics', () => {
  it('one set per lease up to the limit, labels escaped, unknown values left out, the rest counted as omitted', async () => {
    const all = await leaseMetrics(root, store, 1_000);
    const text = all.join('\n');
    expect(text).toContain('leasehold_lease_holder_info{holder="Worker-1",lease="r/a",source="r",state="held"} 1');
    // A key with a quote and a backslash: escaped as the text format wants, one series.
    expect(text).toContain('leasehold_lease_holder_info{holder="",lease="r/b \\"quoted\\", \\\\ odd",source="r",state="free"} 1');
    // The etcd lease's source is down: stale, and no remaining time is claimed for it.
    expect(text).toContain('leasehold_lease_holder_info{holder="leader-1",lease="e/x",source="e",state="stale"} 1');
    expect(text).not.toMatch(/leasehold_lease_remaining_seconds\{lease="e\/x"/);
    expect(text).toMatch(/leasehold_lease_remaining_seconds\{lease="r\/a",source="r"\} 1\d\.\d+/);
    expect(text).toContain('leasehold_lease_token{lease="r/a",source="r"} 5');
    expect(text).toContain('leasehold_lease_ttl_seconds{lease="r/a",source="r"} 30');
    expect(text).toContain('leasehold_lease_renewal_margin_seconds{lease="r/a",source="r"} 20');
    // An unfenced lease has no token series; a change of hands in the hour is counted.
    expect(text).not.toContain('leasehold_lease_token{lease="r/c"');
    expect(text).toContain('leasehold_lease_changes_of_hands_last_hour{lease="r/a",source="r"} 1');
    expect(text).toContain('leasehold_lease_series_omitted 0');

    const two = (await leaseMetrics(root, store, 2)).join('\n');
    expect(two.match(/^leasehold_lease_holder_info\{/gm)).toHaveLength(2);
    expect(two).toContain('leasehold_lease_series_limit 2');
    expect(two).toMatch(/leasehold_lease_series_omitted [1-9]\d*/);

    const none = (await leaseMetrics(root, store, 0)).join('\n');
    expect(none).not.toContain('leasehold_lease_holder_info{');
  });
});

describe('the cached lease list', () => {
  it.each<[string, LeaseFilter]>([
    ['everything', {}],
    ['one source', { source: 'r' }],
    ['one state', { state: 'held' }],
    ['text in a holder, any case', { q: 'worker-1' }],
    ['text in a last holder', { q: 'WORKER-2' }],
    ['a limit', { limit: 2 }],
    ['nothing', { source: 'none' }],
  ])('%s: the same leases, fields and order as the store', async (_name, filter) => {
    const { reference, cached } = await both(filter);
    expect(withoutRemaining(cached.leases)).toEqual(withoutRemaining(reference.leases));
    expect(cached.total).toBe(reference.total);
    expect(cached.truncated).toBe(reference.truncated);
    for (const [i, lease] of cached.leases.entries()) {
      const expected = reference.leases[i]!.remainingMs;
      if (expected === null) expect(lease.remainingMs).toBeNull();
      else expect(Math.abs(lease.remainingMs! - expected)).toBeLessThan(1_000);
    }
  });

  it('counts changes of hands in the last hour only: an expiry and another holder\'s grant once, first sightings not', async () => {
    const { cached, reference } = await both({});
    expect(reference.leases.find((l) => l.id === 'r/c')!.recentTransitions).toBe(0);
    expect(cached.leases.find((l) => l.id === 'r/a')!.recentTransitions).toBe(1);
    expect(cached.leases.find((l) => l.id === 'e/x')!.recentTransitions).toBe(1);
    expect(cached.leases.find((l) => l.id === 'r/c')!.recentTransitions).toBe(0);
  });

  it('follows the live bus: a lease that changes, a new lease, a change of hands', async () => {
    const { cached } = await both({});
    const a = cached.leases.find((l) => l.id === 'r/a')!;
    publish({ type: 'lease', lease: { ...a, holder: 'worker-9', token: '6', recentTransitions: null } });
    publish({ type: 'event', event: { id: '1000', leaseId: 'r/a', type: 'taken_over', at: new Date().toISOString(), holder: 'worker-9', previousHolder: 'Worker-1', token: '6', previousToken: '5', gapMs: 0, detail: null } });
    publish({ type: 'lease', lease: { ...a, id: 'r/new', key: 'new', holder: 'fresh', recentTransitions: null } });
    publish({ type: 'event', event: { id: '1001', leaseId: 'r/new', type: 'acquired', at: new Date().toISOString(), holder: 'fresh', previousHolder: null, token: '1', previousToken: null, gapMs: null, detail: { firstSeen: true } } });
    const after = JSON.parse((await leaseListJson(root, store, { source: 'r' })).json.toString('utf8')) as LeaseView[];
    expect(after.find((l) => l.id === 'r/a')).toMatchObject({ holder: 'worker-9', token: '6', recentTransitions: 2 });
    expect(after.map((l) => l.id)).toEqual(['r/a', 'r/b "quoted", \\ odd', 'r/c', 'r/new']);
    expect(after.find((l) => l.id === 'r/new')!.recentTransitions).toBe(0);
  });

  it('keeps the whole list assembled across many chunks: one change shows, the rest stays, remaining time is current', async () => {
    const { cached } = await both({});
    const a = cached.leases.find((l) => l.id === 'r/a')!;
    // 700 more leases: the whole list spans several assembled chunks of 256.
    for (let i = 0; i < 700; i++) {
      const expiresAt = new Date(Date.now() + 1_000 + i * 100).toISOString();
      publish({ type: 'lease', lease: { ...a, id: `r/m${String(i).padStart(3, '0')}`, key: `m${String(i).padStart(3, '0')}`, holder: `h${i}`, expiresAt, recentTransitions: null } });
    }
    const first = JSON.parse((await leaseListJson(root, store, {})).json.toString('utf8')) as LeaseView[];
    expect(first).toHaveLength(705);
    const m500 = first.find((l) => l.id === 'r/m500')!;
    expect(m500.holder).toBe('h500');
    expect(m500.remainingMs).toBeGreaterThan(50_000 - 5_000);
    // One lease in a middle chunk changes hands; its neighbours stay as they were.
    publish({ type: 'lease', lease: { ...m500, holder: 'taker', token: '77', recentTransitions: null } });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const second = JSON.parse((await leaseListJson(root, store, {})).json.toString('utf8')) as LeaseView[];
    expect(second.find((l) => l.id === 'r/m500')).toMatchObject({ holder: 'taker', token: '77' });
    expect(second.find((l) => l.id === 'r/m499')!.holder).toBe('h499');
    expect(second.map((l) => l.id)).toEqual(first.map((l) => l.id));
    // Time moved on between the two answers and the countdown with it, in every chunk.
    const m000 = (list: LeaseView[]) => list.find((l) => l.id === 'r/m000')!.remainingMs!;
    expect(m000(second)).toBeLessThan(m000(first));
    // The filtered path agrees with the whole list.
    const filtered = JSON.parse((await leaseListJson(root, store, { source: 'r' })).json.toString('utf8')) as LeaseView[];
    expect(withoutRemaining(filtered)).toEqual(withoutRemaining(second.filter((l) => l.source === 'r')));
  });

  it('a source read that changes nothing (about one a second per source) does not read the list again from the store', async () => {
    const list = async () => JSON.parse((await leaseListJson(root, store, { source: 'r' })).json.toString('utf8')) as LeaseView[];
    const holderOfC = async () => (await list()).find((l) => l.id === 'r/c')!.holder;
    // Whatever the first word of each source's status set off (the relay's first pass over
    // the sources included) is over first.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await list();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const cached = await holderOfC();
    // Written to the store behind the cache's back: only a reload would show it.
    await store.withSql((sql) => sql.query(`UPDATE "Lease" SET holder = 'behind-the-back' WHERE id = 'r/c'`));
    for (let i = 0; i < 20; i++) publish({ type: 'source', source: { name: 'r', backend: 'redis', status: 'up', lastGoodReadAt: new Date().toISOString(), lastError: null, lastPollMs: 1 } });
    await list(); // a reload, had one been asked for, would start here...
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await holderOfC()).toBe(cached); // ...and show here
    expect(cached).not.toBe('behind-the-back');
  });
});

describe('pages of the list (GET /api/v1/leases?cursor=)', () => {
  it('a walk over pages of 700 sends each of 5,000 leases once while leases come and go, with counts of all; a sort of the overview pages too', async () => {
    await store.withSql((sql) =>
      sql.query(
        `INSERT INTO "Lease" (id, "sourceName", backend, kind, key, state, holder, token, fenced, "ttlMs", "expiresAt", "observedAt", stale, candidates, "updatedAt")
         SELECT 'r/p' || lpad(i::text, 5, '0'), 'r', 'redis', 'lock', 'p' || lpad(i::text, 5, '0'), CASE WHEN i % 10 = 0 THEN 'expired' ELSE 'held' END,
                CASE WHEN i % 10 = 0 THEN NULL ELSE 'h' || i END, i, true, 30000, now() + (i % 30) * interval '1 second', now(), false, '[]', now()
         FROM generate_series(0, 4999) AS i`,
      ),
    );
    // A root of its own on a store of its own: a list read from the store now, with the new leases.
    const own = testRoot(await openStore({ kind: 'postgres', url: db.url }));
    const page = async (query: Record<string, string>) => {
      const filter = parseQuery(leasesQuery, new URLSearchParams(query));
      return leaseListSchema.parse(JSON.parse((await leaseListReply(own, filter)).body.toString('utf8')));
    };
    try {
      const seen: string[] = [];
      let body = await page({ source: 'r', limit: '700' });
      expect(body.total).toBe(5_003);
      expect(body.counts!.sources).toEqual({ r: 5_003, e: 1 });
      expect(body.counts!.states).toMatchObject({ expired: 500, stale: 1 });
      let pages = 1;
      for (;;) {
        seen.push(...body.leases.map((l) => l.id));
        if (!body.next) break;
        // Between pages: a lease behind the cursor and one ahead of it come; one ahead goes.
        own.bus.publish({ type: 'lease', lease: { ...body.leases[0]!, id: `r/a-new-${pages}`, key: `a-new-${pages}`, recentTransitions: null } });
        own.bus.publish({ type: 'lease', lease: { ...body.leases[0]!, id: `r/z-new-${pages}`, key: `z-new-${pages}`, recentTransitions: null } });
        body = await page({ source: 'r', limit: '700', cursor: body.next });
        pages++;
      }
      const all = Array.from({ length: 5_000 }, (_, i) => `r/p${String(i).padStart(5, '0')}`);
      for (const id of [...all, 'r/a', 'r/c']) expect(seen.filter((s) => s === id), id).toHaveLength(1);
      expect(new Set(seen).size).toBe(seen.length);
      expect(pages).toBe(8);

      // The overview's order, problems first: the expired leases lead, in key order.
      const problems = await page({ source: 'r', sort: 'problems', limit: '500' });
      expect(problems.leases.every((l) => l.state === 'expired')).toBe(true);
      const second = await page({ source: 'r', sort: 'problems', limit: '500', cursor: problems.next! });
      expect(second.leases[0]!.state).toBe('held');
      // A search over all of them, and a cursor of another order refused with a sentence.
      expect((await page({ q: 'P0499', limit: '5' })).leases.map((l) => l.id)).toEqual(['r/p04990', 'r/p04991', 'r/p04992', 'r/p04993', 'r/p04994']);
      await expect(page({ sort: 'token', cursor: problems.next! })).rejects.toThrow(/"cursor" must be .*sorted the same way \(this cursor is for sort=problems\)/);
    } finally {
      await own.close();
    }
  });
});
