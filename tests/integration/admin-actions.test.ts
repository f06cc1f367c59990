// The guarded actions of lib/admin (docs/admin-actions.md) end to end, on the real backends and a
// real store, with nothing mocked: a collector observes each lease into the store, then
// forceExpireLease / forceReleaseLease act on it as the API route would. What must hold:
// - an operator's force-expire of a fenced lease raises its token, answers with both tokens and
//   the audit id, writes `requested` then `done` (one request id, the principal, the state
//   seen, both tokens, the reason) and a force_expired event; the next grant is above the new
//   token and the fenced store refuses the old holder;
// - a stale expectation is a 409 carrying the lease and the backend's state, changes nothing
//   and is audited as refused 409 with what was found;
// - a viewer is refused (403, audited); a dry run plans, writes nothing and changes nothing;
// - an unfenced lease cannot be force-expired (422); only an admin who acknowledges it may
//   force-release it;
// - a force racing the holder's own renew or release has exactly one winner, and every attempt
//   leaves exactly one `requested` and one result entry, 500 times over per backend;
// - a backend that does not answer is a 503 and an `error` entry whose outcome is unknown.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_ACTIONS } from '../../lib/admin/actions';
import { ChangedSinceSeenError, forceBody, type ForceBody } from '../../lib/admin/force-request';
import { runForceAction, type ForceContext } from '../../lib/admin/guarded-force';
import { AuthError } from '../../lib/auth/errors';
import type { Principal } from '../../lib/auth/principal';
import { verifyAuditChain, type AuditRow } from '../../lib/db/audit';
import { readLeaseEvents } from '../../lib/db/leases';
import { getLease } from '../../lib/queries/leases';
import { openStore, type Store } from '../../lib/db/store';
import type { Collector } from '../../lib/collector';
import { createFencedStore, LeaseLostError, type FencedStore } from '../../lib/lease';
import { auditOf, createAdminWorld, failureOf, holdFenced, observed, principal, REASON, uid, type AdminWorld, type Held } from '../support/admin-fixtures';
import { testCollector } from '../support/collector';
import { createPostgresDatabase, STORE_KINDS, type TestDatabase } from '../support/databases';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
// Each action is a row of lib/admin/actions.ts, run by runForceAction.
const forceExpireLease = (context: ForceContext) => runForceAction(ADMIN_ACTIONS['force-expire'], context);
const forceReleaseLease = (context: ForceContext) => runForceAction(ADMIN_ACTIONS['force-release'], context);
const operator = principal('operator');
const viewer = principal('viewer');
const admin = principal('admin', 'token');
/** The fenced layouts of createAdminWorld (world.fenced[index]), named here for describe.each before the world exists. */
const FENCED = [
  { index: 0, name: 'postgres lease table' },
  { index: 1, name: 'redis with a fence counter' },
  { index: 2, name: 'etcd single key' },
];

let world: AdminWorld;
let fencedStore: FencedStore;
beforeAll(async () => {
  world = await createAdminWorld();
  fencedStore = createFencedStore({ url: world.sourceDbUrl, table: `fenced_${uid()}` });
});
afterAll(async () => {
  await fencedStore?.close();
  await world?.close();
});

/** Who asked, why, and what they saw: the same on an action's every entry. */
function expectAsked(entries: AuditRow[], who: Principal, held: Pick<Held, 'leaseId'> & { expectedHolder: string; expectedToken: string | null }) {
  expect(new Set(entries.map((e) => e.requestId)).size).toBe(1);
  for (const entry of entries) {
    expect(entry).toMatchObject({ actor: who.name, actorRole: who.role, authMethod: who.method, clientAddress: who.address, leaseId: held.leaseId, reason: REASON, dryRun: false });
    expect(entry).toMatchObject({ expectedHolder: held.expectedHolder, expectedToken: held.expectedToken === null ? null : BigInt(held.expectedToken) });
  }
}
const asked = (h: Held) => ({ leaseId: h.leaseId, expectedHolder: h.lease.holder, expectedToken: h.lease.token.toString() });

async function expectChainOk(store: Store) {
  const report = await verifyAuditChain(store);
  expect(report.firstBroken).toBeUndefined();
  expect(report.ok).toBe(true);
}

describe.each(STORE_KINDS)('lib/admin on a $kind store', ({ create }) => {
  let db: TestDatabase;
  let store: Store;
  let collector: Collector;
  beforeAll(async () => {
    db = await create();
    store = await openStore(db.storeConfig());
    collector = testCollector(store, world.sources, { pollMs: 150 });
  });
  afterAll(async () => {
    await collector?.stop();
    await store?.close();
    await db?.drop();
  });
  const context = (held: Pick<Held, 'leaseId'>, body: ForceBody, who: Principal = operator) => ({
    store,
    leaseId: held.leaseId,
    body,
    principal: who,
    sources: world.sources,
    root: world.parts,
  });

  describe.each(FENCED)('fenced: $name', ({ index }) => {
    const layout = () => world.fenced[index]!;

    it('an operator force-expires it: tokens, audit pair, history event; the next grant is above, the old holder is fenced off', async () => {
      const held = await holdFenced(store, layout(), 'expire');
      const resource = `res-${uid()}`;
      expect(await fencedStore.write(resource, held.lease.token, 'old holder, before')).toBe('accepted');
      const outcome = await forceExpireLease(context(held, held.body()));
      if (outcome.dryRun) throw new Error('not a dry run');
      expect(outcome.previousToken).toBe(held.lease.token.toString());
      expect(BigInt(outcome.newToken!)).toBeGreaterThan(held.lease.token);
      expect(outcome.lease).toMatchObject({ id: held.leaseId, source: layout().source, fenced: true });

      const entries = await auditOf(store, held.leaseId);
      expect(entries.map((e) => [e.phase, e.status])).toEqual([['requested', null], ['done', 200]]);
      expectAsked(entries, operator, asked(held));
      expect(entries[1]!.id.toString()).toBe(outcome.auditId);
      expect(entries[1]).toMatchObject({ action: 'force-expire', previousToken: held.lease.token, newToken: BigInt(outcome.newToken!), actualHolder: held.lease.holder, actualToken: held.lease.token });
      expect(entries[0]).toMatchObject({ action: 'force-expire', previousToken: null, newToken: null });

      const { events } = await readLeaseEvents(store, held.leaseId, { types: ['force_expired'], limit: 10 });
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ previousHolder: held.lease.holder, previousToken: outcome.previousToken, token: outcome.newToken, holder: null });
      expect(events[0]!.detail).toMatchObject({ auditId: outcome.auditId, actor: operator.name, reason: REASON });

      await expect(held.client.renew(held.lease)).rejects.toBeInstanceOf(LeaseLostError);
      const next = (await layout().client().acquire(held.leaseKey, { holder: 'successor', ttlMs: 30_000 }))!;
      expect(next).not.toBeNull();
      expect(next.token).toBeGreaterThan(BigInt(outcome.newToken!));
      expect(await fencedStore.write(resource, next.token, 'successor')).toBe('accepted');
      expect(await fencedStore.write(resource, held.lease.token, 'old holder, late')).toBe('rejected');
      expect((await fencedStore.log(resource)).map((w) => w.value)).toEqual(['old holder, before', 'successor']);
      await expectChainOk(store);
    });

    it("the 409's lease is the lease as GET shows it: its changes of hands in the last hour counted", async () => {
      const held = await holdFenced(store, layout(), 'moved');
      await held.client.release(held.lease);
      const next = (await layout().client().acquire(held.leaseKey, { holder: 'worker-2', ttlMs: 30_000 }))!;
      await observed(store, held.leaseId, next.holder, next.token.toString());
      const error = await failureOf(forceExpireLease(context(held, held.body())));
      expect(error).toBeInstanceOf(ChangedSinceSeenError);
      const shown = await getLease(store, held.leaseId);
      expect(shown!.recentTransitions).toBeGreaterThan(0);
      expect((error as ChangedSinceSeenError).current).toMatchObject({ holder: next.holder, recentTransitions: shown!.recentTransitions });
    });

    it('a stale expected token is a 409 with the lease and the backend state; nothing changes; refused 409 is audited', async () => {
      const held = await holdFenced(store, layout(), 'stale');
      const stale = (held.lease.token - 1n).toString();
      const error = await failureOf(forceExpireLease(context(held, held.body({ expectedToken: stale }))));
      expect(error).toBeInstanceOf(ChangedSinceSeenError);
      const changed = error as ChangedSinceSeenError;
      expect(changed.status).toBe(409);
      expect(changed.backend).toEqual({ holder: held.lease.holder, token: held.lease.token.toString() });
      expect(changed.current).toMatchObject({ id: held.leaseId, state: 'held', holder: held.lease.holder, token: held.lease.token.toString() });

      expect(await held.client.inspect(held.leaseKey)).toMatchObject({ holder: held.lease.holder, token: held.lease.token });
      await expect(held.client.renew(held.lease)).resolves.toMatchObject({ token: held.lease.token });
      const entries = await auditOf(store, held.leaseId);
      expect(entries.map((e) => [e.phase, e.status])).toEqual([['requested', null], ['refused', 409]]);
      expectAsked(entries, operator, { ...asked(held), expectedToken: stale });
      expect(entries[1]).toMatchObject({ id: BigInt(changed.auditId), actualHolder: held.lease.holder, actualToken: held.lease.token, newToken: null });
      expect((await readLeaseEvents(store, held.leaseId, { types: ['force_expired'], limit: 10 })).events).toEqual([]);
      await expectChainOk(store);
    });

    it('a viewer is refused (403, audited); a dry run returns the plan, writes no entry and changes nothing', async () => {
      const held = await holdFenced(store, layout(), 'viewer');
      for (const action of [forceExpireLease, forceReleaseLease]) {
        const error = await failureOf(action(context(held, held.body(), viewer)));
        expect(error).toBeInstanceOf(AuthError);
        expect(error).toMatchObject({ status: 403, code: 'forbidden' });
      }
      const refusals = await auditOf(store, held.leaseId);
      expect(refusals.map((e) => [e.action, e.phase, e.status])).toEqual([
        ['force-expire', 'requested', null],
        ['force-expire', 'refused', 403],
        ['force-release', 'requested', null],
        ['force-release', 'refused', 403],
      ]);
      expectAsked(refusals.slice(0, 2), viewer, asked(held));
      expectAsked(refusals.slice(2), viewer, asked(held));
      // A viewer's dry run is refused too, and not audited (a dry run never is).
      expect(await failureOf(forceExpireLease(context(held, held.body({ dryRun: true }), viewer)))).toMatchObject({ status: 403 });

      const outcome = await forceExpireLease(context(held, held.body({ dryRun: true })));
      if (!outcome.dryRun) throw new Error('the dry run was applied');
      expect(outcome.plan).toMatchObject({ fenced: true });
      expect(outcome.plan.steps.length).toBeGreaterThan(0);
      expect(JSON.stringify(outcome.plan)).toContain(held.lease.token.toString());
      expect(await auditOf(store, held.leaseId)).toHaveLength(refusals.length);
      expect(await held.client.inspect(held.leaseKey)).toMatchObject({ holder: held.lease.holder, token: held.lease.token });
      await expect(held.client.renew(held.lease)).resolves.toMatchObject({ token: held.lease.token });
      await expectChainOk(store);
    });
  });

  describe('unfenced: a ShedLock row and a Redis lock without a fence counter', () => {
    const UNFENCED = [
      {
        name: 'shedlock row',
        async hold(label: string) {
          const sql = new pg.Client(world.sourceDbUrl);
          await sql.connect();
          const row = async () => (await sql.query(`SELECT locked_by, lock_until <= timezone('utc', now()) AS free FROM ${world.shedlockTable} WHERE name = $1`, [label])).rows[0];
          await sql.query(
            `INSERT INTO ${world.shedlockTable} (name, lock_until, locked_at, locked_by)
             VALUES ($1, timezone('utc', now()) + interval '30 seconds', timezone('utc', now()), 'app-host-3')`,
            [label],
          );
          return {
            leaseId: `pg/${world.shedlockTable}/${label}`,
            holder: 'app-host-3',
            state: async () => row(),
            held: { locked_by: 'app-host-3', free: false },
            freed: { locked_by: 'app-host-3', free: true },
            close: () => sql.end(),
          };
        },
      },
      {
        name: 'redis lock',
        async hold(label: string) {
          const key = world.redisKey(label);
          await world.redis.set(key, 'app-host-7:f00d', 'PX', 30_000, 'NX');
          const state = async () => ({ value: await world.redis.get(key), fence: await world.redis.exists(`${key}:fence`) });
          return { leaseId: `redis/${key}`, holder: 'app-host-7:f00d', state, held: { value: 'app-host-7:f00d', fence: 0 }, freed: { value: null, fence: 0 }, close: async () => {} };
        },
      },
    ];

    it.each(UNFENCED)('$name: no force-expire (422); release needs an admin (403) who acknowledges it (422); then done, no tokens', async (layout) => {
      const lease = await layout.hold(`unfenced-${uid()}`);
      try {
        await observed(store, lease.leaseId, lease.holder, null);
        const body = (more = {}) => forceBody.parse({ expectedHolder: lease.holder, expectedToken: null, reason: REASON, ...more });
        const ctx = (who: Principal, more = {}) => context(lease, body(more), who);
        expect(await failureOf(forceExpireLease(ctx(operator)))).toMatchObject({ status: 422, code: 'unfenced' });
        expect(await failureOf(forceExpireLease(ctx(admin, { acknowledgeUnfenced: true })))).toMatchObject({ status: 422, code: 'unfenced' });
        const forbidden = await failureOf(forceReleaseLease(ctx(operator, { acknowledgeUnfenced: true })));
        expect(forbidden).toBeInstanceOf(AuthError);
        expect(forbidden.status).toBe(403);
        expect(await failureOf(forceReleaseLease(ctx(admin)))).toMatchObject({ status: 422, code: 'unfenced_not_acknowledged' });
        expect(await lease.state()).toEqual(lease.held);
        const refusals = await auditOf(store, lease.leaseId);
        expect(refusals.map((e) => [e.action, e.phase, e.status, e.actorRole])).toEqual([
          ['force-expire', 'requested', null, 'operator'],
          ['force-expire', 'refused', 422, 'operator'],
          ['force-expire', 'requested', null, 'admin'],
          ['force-expire', 'refused', 422, 'admin'],
          ['force-release', 'requested', null, 'operator'],
          ['force-release', 'refused', 403, 'operator'],
          ['force-release', 'requested', null, 'admin'],
          ['force-release', 'refused', 422, 'admin'],
        ]);

        const outcome = await forceReleaseLease(ctx(admin, { acknowledgeUnfenced: true }));
        if (outcome.dryRun) throw new Error('not a dry run');
        expect(outcome).toMatchObject({ previousToken: null, newToken: null });
        expect(await lease.state()).toEqual(lease.freed);
        const entries = (await auditOf(store, lease.leaseId)).slice(refusals.length);
        expect(entries.map((e) => [e.phase, e.status])).toEqual([['requested', null], ['done', 200]]);
        expectAsked(entries, admin, { leaseId: lease.leaseId, expectedHolder: lease.holder, expectedToken: null });
        expect(entries[1]).toMatchObject({ id: BigInt(outcome.auditId), previousToken: null, newToken: null, detail: expect.objectContaining({ acknowledgeUnfenced: true }) });
        const { events } = await readLeaseEvents(store, lease.leaseId, { types: ['force_released'], limit: 10 });
        expect(events).toHaveLength(1);
        expect(events[0]).toMatchObject({ previousHolder: lease.holder, previousToken: null, token: null, detail: expect.objectContaining({ auditId: outcome.auditId, actor: admin.name }) });
        await expectChainOk(store);
      } finally {
        await lease.close();
      }
    });
  });

  it('a backend that does not answer: 503, and an `error` entry whose outcome is unknown; a dry run writes nothing', async () => {
    const held = await holdFenced(store, world.gone, 'gone');
    const down = { ...context(held, held.body()), sources: world.downSources };
    const started = performance.now();
    const error = await failureOf(forceExpireLease(down));
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(error).toMatchObject({ name: 'BackendUnavailableError', status: 503, code: 'source_unavailable' });
    expect(error.message).toMatch(/not known/);
    const entries = await auditOf(store, held.leaseId);
    expect(entries.map((e) => [e.phase, e.status])).toEqual([['requested', null], ['error', 503]]);
    expectAsked(entries, operator, asked(held));
    expect(entries[1]!.detail).toMatchObject({ outcome: 'unknown', message: expect.stringMatching(/127\.0\.0\.1:1/) });
    expect(await failureOf(forceExpireLease({ ...down, body: held.body({ dryRun: true }) }))).toMatchObject({ status: 503 });
    expect(await auditOf(store, held.leaseId)).toHaveLength(2);
    expect(await held.client.inspect(held.leaseKey)).toMatchObject({ holder: held.lease.holder, token: held.lease.token });
    await expectChainOk(store);
  });

  it('a lease whose source is no longer configured: 422, audited like any refusal; nothing sent', async () => {
    const held = await holdFenced(store, world.gone, 'unconfigured');
    const unconfigured = { ...context(held, held.body()), sources: world.sources.filter((s) => s.name !== 'gone') };
    expect(await failureOf(forceExpireLease(unconfigured))).toMatchObject({ status: 422, code: 'source_not_configured' });
    expect(await failureOf(forceExpireLease({ ...unconfigured, body: held.body({ dryRun: true }) }))).toMatchObject({ status: 422 });
    const entries = await auditOf(store, held.leaseId);
    expect(entries.map((e) => [e.phase, e.status])).toEqual([['requested', null], ['refused', 422]]);
    expectAsked(entries, operator, asked(held));
    expect(await held.client.inspect(held.leaseKey)).toMatchObject({ holder: held.lease.holder, token: held.lease.token });
    await expectChainOk(store);
  });
});

// ------------------------------------------------------------------ races

describe('races: the holder renews or releases while an operator force-expires what they saw (postgres store)', () => {
  const ITERATIONS = 500;
  const CONCURRENCY = 4;
  /**
   * The holder's move starts up to this long after the force: lib/admin reads the lease and
   * writes its `requested` entry before its compare-and-set, so either may land first. Every
   * fifth iteration waits longer, so that forces beat releases even on a loaded machine.
   */
  const JITTER_MS = 30;
  const LONG_JITTER_MS = 100;
  let db: TestDatabase & { url: string };
  let store: Store;
  beforeAll(async () => {
    db = await createPostgresDatabase('lh_admin_race');
    store = await openStore(db.storeConfig());
  });
  afterAll(async () => {
    await store?.close();
    await db?.drop();
  });

  // One winner, as in tests/contract/force-actions.test.ts: 'release' compares the same state as
  // the force, so either wins; 'renew' changes nothing the force compares, so the force wins and
  // what must hold is that the grant is then dead. etcd runs only 'renew' (lib/lease's etcd
  // release is a read then a LeaseRevoke, not one compare-and-set).
  const RACES = FENCED.map((layout) => ({ ...layout, kinds: (layout.name.startsWith('etcd') ? ['renew'] : ['renew', 'release']) as ('renew' | 'release')[] }));

  it.each(RACES)('$name: 500 races, one winner each, and every attempt audited as requested + one result', async ({ index, kinds }) => {
    const layout = world.fenced[index]!;
    // One lease per worker, observed once and re-acquired every iteration: the force reads the
    // Lease row only for its key, source and fenced flag.
    const collector = testCollector(store, world.sources, { pollMs: 150 });
    const workers = await Promise.all(
      Array.from({ length: CONCURRENCY }, async (_, w) => {
        const held = await holdFenced(store, layout, `race${w}`);
        await held.client.release(held.lease);
        return held;
      }),
    ).finally(() => collector.stop());

    const outcomes = { forced: 0, holder: 0, attempts: 0, releasesForced: 0 };
    const problems: string[] = [];
    const lost = (error: unknown) => {
      if (error instanceof LeaseLostError) return false;
      throw error;
    };
    await Promise.all(
      workers.map(async ({ client, leaseKey, leaseId }, w) => {
        for (let i = w; i < ITERATIONS; i += CONCURRENCY) {
          const lease = await client.acquire(leaseKey, { holder: 'racer', ttlMs: 30_000, waitMs: 5_000 });
          if (!lease) {
            problems.push(`iteration ${i}: no grant`);
            continue;
          }
          const kind = kinds[i % kinds.length]!;
          outcomes.attempts++;
          // What the operator saw: this grant. true: the force won; false: 409, the lease had changed; null: anything else.
          const body = forceBody.parse({ expectedHolder: lease.holder, expectedToken: lease.token.toString(), reason: REASON });
          const force = forceExpireLease({ store, leaseId, principal: operator, sources: world.sources, root: world.parts, body }).then(
            () => true,
            (error: unknown) => (error instanceof ChangedSinceSeenError ? false : (problems.push(`iteration ${i}: ${String(error)}`), null)),
          );
          const jitter = Math.random() * (i % 5 === 0 ? LONG_JITTER_MS : JITTER_MS);
          const holderMove = sleep(jitter).then(() => (kind === 'renew' ? client.renew(lease).then(() => true, lost) : client.release(lease)));
          const [forced, holderMoved] = await Promise.all([force, holderMove]);
          if (forced === null) continue;
          let holderWon = holderMoved;
          if (kind === 'renew') {
            holderWon = await client.renew(lease).then(() => true, lost);
            if (!holderMoved && !forced) problems.push(`iteration ${i}: the renew failed without a force`);
            if (holderWon) await client.release(lease);
          }
          if (forced === holderWon) problems.push(`iteration ${i} (${kind}): ${forced ? 'both the force and the holder won' : 'neither won'}`);
          outcomes[forced ? 'forced' : 'holder']++;
          if (forced && kind === 'release') outcomes.releasesForced++;
        }
      }),
    );
    expect(problems).toEqual([]);
    expect(outcomes.attempts).toBe(ITERATIONS);
    expect(outcomes.forced + outcomes.holder).toBe(ITERATIONS);
    expect(outcomes.forced).toBeGreaterThan(0);
    // Both orders happened: releases that won, and releases the force beat.
    if (kinds.includes('release')) {
      expect(outcomes.holder, 'releases that beat the force').toBeGreaterThan(0);
      expect(outcomes.releasesForced, 'releases the force beat').toBeGreaterThan(0);
    }

    // Every attempt: exactly one `requested` and exactly one result, under one request id.
    const entries = (await Promise.all(workers.map((w) => auditOf(store, w.leaseId)))).flat();
    const phases = new Map<string, string[]>();
    for (const e of entries) phases.set(e.requestId, [...(phases.get(e.requestId) ?? []), e.status === null ? e.phase : `${e.phase} ${e.status}`]);
    const requested = entries.filter((e) => e.phase === 'requested').length;
    const results = entries.filter((e) => e.phase !== 'requested').length;
    expect({ requested, results }).toEqual({ requested: ITERATIONS, results: ITERATIONS });
    expect([...phases.values()].filter((p) => p.join() !== 'requested,done 200' && p.join() !== 'requested,refused 409')).toEqual([]);
    expect(entries.filter((e) => e.phase === 'done')).toHaveLength(outcomes.forced);
    expect(entries.filter((e) => e.phase === 'refused')).toHaveLength(outcomes.holder);
    const events = await Promise.all(workers.map(async (w) => (await readLeaseEvents(store, w.leaseId, { types: ['force_expired'], limit: ITERATIONS })).events.length));
    expect(events.reduce((a, b) => a + b, 0)).toBe(outcomes.forced);
    await expectChainOk(store);
  }, 60_000);
});
