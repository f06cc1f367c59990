// Chaos on PostgreSQL, two servers of the suite's own: the sources' server (a lease table)
// restarted as a crash restarts it; the store's server restarted while the collector writes
// events, the operator's action writes its audit entries and the alert worker its deliveries.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SourceConfig } from '../../lib/config';
import { startPostgresServer, type PostgresServer } from '../support/postgres-server';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import { sleep, startWorld, uid, until, type Layout, type World } from './world';

const table = `leases_${uid()}`;
let sourcesPg: PostgresServer;
let storePg: PostgresServer;
let proxy: TcpProxy;
let sourceUrl: string;
let world: World;
const layout = (): Layout => ({ source: 'pg', client: { backend: 'postgres', url: sourceUrl, table }, key: (l) => l, leaseId: (k) => `pg/${table}/${k}` });

beforeAll(async () => {
  // One after the other: a server that started is stopped by afterAll even when the next fails.
  sourcesPg = await startPostgresServer(25541);
  storePg = await startPostgresServer(25542);
  sourceUrl = await sourcesPg.createDatabase('jobs');
  const sql = new pg.Client(sourceUrl);
  await sql.connect();
  await sql.query(`CREATE TABLE ${table} (name VARCHAR(200) PRIMARY KEY, owner VARCHAR(200), expires_at TIMESTAMPTZ NOT NULL, token BIGINT NOT NULL DEFAULT 0)`);
  await sql.end();
  // The collector and the operator reach the lease table through a proxy (a slow link on demand); the holders directly.
  proxy = await startTcpProxy('127.0.0.1', sourcesPg.port);
  const sources = [{ name: 'pg', backend: 'postgres', url: `postgres://postgres@127.0.0.1:${proxy.port}/jobs`, tables: [{ table, format: 'leasehold' }], advisoryLocks: false }] as SourceConfig[];
  world = await startWorld({ sources, storeUrl: await storePg.createDatabase('store') });
  for (const label of ['digest', 'billing', 'reports']) await world.hold(layout(), label);
  await world.observed(world.holders);
}, 120_000);

afterAll(async () => {
  await world?.stop();
  await proxy?.close();
  await Promise.all([sourcesPg?.stop(), storePg?.stop()]);
});

describe('chaos: PostgreSQL', () => {
  it("the sources' server restarted: down and stale meanwhile, back within two polls, forced once", async () => {
    const victim = await world.hold(layout(), 'victim');
    await world.observed([victim]);
    const fault = world.fault("Sources' PostgreSQL restarted (immediate stop, 5 s down)", { source: 'pg', down: true });
    await fault.begin();
    await sourcesPg.kill();
    await fault.whileDown();
    expect(await world.forceExpire(victim)).toBe('unknown');
    await sleep(3_000);
    await sourcesPg.start();
    fault.recovered();
    await sleep(1_500); // the holders renew again
    expect(victim.lost).toBe(false); // not applied: the server was away
    await world.observed([victim]);
    expect(await world.forceExpire(victim)).toBe('done');
    await fault.check();
  });

  it("the store's server restarted while events, audit entries and deliveries are being written: nothing lost, nothing twice", async () => {
    const victim = await world.hold(layout(), 'victim2');
    const moving = await world.hold(layout(), 'moving');
    await world.observed([victim, moving]);
    const fault = world.fault("Store's PostgreSQL restarted while written to", { source: 'pg', down: false, steady: world.holders.filter((h) => !h.lost && h !== victim && h !== moving && h.key !== 'victim') });
    const ownershipToken = () => world.store.prisma.$queryRaw<{ token: bigint }[]>`SELECT token FROM "CollectorLease" WHERE name = 'source:pg'`.then((rows) => rows[0]?.token ?? null);
    const tokenBefore = await ownershipToken();
    await fault.begin();
    // The operator's action is on its way to the backend (a slow link) when the store goes away:
    // its result entry is written when the store is back.
    proxy.delay(400);
    const acting = world.forceExpire(victim);
    // The store goes away once the action's "requested" entry is written (the backend's answer is
    // then at least one slow round trip away): its result must be written when the store is back.
    await until(
      'the action requested in the audit log',
      () => world.store.prisma.auditEntry.count({ where: { leaseId: victim.leaseId, phase: 'requested' } }),
      (n) => n > 0,
    );
    await storePg.kill();
    // Meanwhile the lease `moving` changes hands: the collector must record it once the store is back.
    expect(await moving.client.release(moving.lease)).toBe(true);
    await moving.stop();
    world.holders.splice(world.holders.indexOf(moving), 1);
    await sleep(1_500); // free for three polls: the collector reads it free, then taken again
    const successor = await world.hold({ ...layout(), key: () => moving.key }, 'successor');
    await sleep(2_000);
    await storePg.start();
    proxy.delay(0);
    fault.recovered();
    expect(await acting).toBe('done');
    await world.observed([successor]);
    const history = await until(
      'the change made while the store was away, recorded',
      async () => (await world.store.prisma.leaseEvent.findMany({ where: { leaseId: moving.leaseId, seq: { gt: 0 } }, orderBy: { seq: 'asc' } })).map((e) => `${e.type}:${e.holder ?? e.previousHolder}`),
      (types) => types.at(-1)?.endsWith(`:${successor.lease.holder}`) === true,
    );
    // Whether the collector read the free moment depends on when its reads ran while the store was
    // away: the release and the new holder, or the handover as one step. Never anything else.
    const held = `acquired:${moving.lease.holder}`;
    // And when the outage outlasted the collector's renew deadline (two thirds of its ownership
    // TTL: on a loaded machine the store takes seconds to start again), it stopped observing and
    // took the source again with a new token: then it cannot say what happened between, and
    // records an observation gap.
    const lapsed = (await ownershipToken())! > tokenBefore!;
    expect([
      [held, `released:${moving.lease.holder}`, `acquired:${successor.lease.holder}`],
      [held, `taken_over:${successor.lease.holder}`],
      ...(lapsed ? [[held, `observation_gap:${successor.lease.holder}`]] : []),
    ]).toContainEqual(history);
    await fault.check();
  });
});
