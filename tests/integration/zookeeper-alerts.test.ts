// Alerts work unchanged on ZooKeeper, through the collector and the store: a Curator holder
// killed with SIGKILL loses its node when the server expires its session, the next in line
// holds, and a failover is raised with the gap without a holder; a leader held past the
// held_too_long rule's limit raises it.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Collector } from '../../lib/collector';
import { updateRule } from '../../lib/db/alert-rules';
import { openStore, type Store } from '../../lib/db/store';
import { testCollector } from '../support/collector';
import { startCuratorHolder, type CuratorHolder } from '../support/curator';
import { createPostgresDatabase, type TestDatabase } from '../support/databases';
import { testServices } from '../support/services';
import { untilChildren, zkClient } from '../support/zookeeper-layouts';

const services = testServices();
const root = `/lha${randomBytes(3).toString('hex')}`;
let db: TestDatabase & { url: string };
let store: Store;
let collector: Collector;
const holders: CuratorHolder[] = [];
const start = (recipe: 'mutex' | 'latch', path: string, id: string) => {
  const holder = startCuratorHolder({ connect: services.zookeeper, recipe, path, id, sessionMs: 4_000 });
  holders.push(holder);
  return holder;
};

beforeAll(async () => {
  const zk = await zkClient(services.zookeeper);
  await zk.mkdirp(root);
  zk.close();
  db = await createPostgresDatabase('lh_zk_alerts');
  store = await openStore({ kind: 'postgres', url: db.url });
  await updateRule(store, 'default-held-too-long', { enabled: true, params: { afterMs: 3_000 } });
  collector = testCollector(store, [{ name: 'zk', backend: 'zookeeper', connect: services.zookeeper, paths: [root], sessionTimeoutMs: 10_000 }], { pollMs: 1_000, alerts: { allowCidrs: ['127.0.0.1/32'] } });
});
afterAll(async () => {
  await Promise.all(holders.map((h) => h.stop()));
  await collector?.stop();
  await store?.close();
  await db?.drop();
});

describe('alerts on ZooKeeper', () => {
  it('a SIGKILLed Curator holder: failover to the next in line, with the gap, once its session expires', async () => {
    const path = `${root}/killed`;
    const first = start('mutex', path, 'a');
    await first.saw('HELD');
    start('mutex', path, 'b');
    await untilChildren(services.zookeeper, path, 2);
    const leaseId = `zk/${path}`;
    await expect.poll(async () => (await store.prisma.lease.findUnique({ where: { id: leaseId } }))?.state, { timeout: 15_000 }).toBe('held');
    const before = (await store.prisma.lease.findUnique({ where: { id: leaseId } }))!;
    first.signal('SIGKILL');
    await expect.poll(async () => (await store.prisma.alert.findMany({ where: { leaseId, ruleType: 'failover' } })).length, { timeout: 15_000 }).toBe(1);
    const [alert] = await store.prisma.alert.findMany({ where: { leaseId, ruleType: 'failover' } });
    expect(alert!.facts).toMatchObject({ previousHolder: before.holder });
    expect(typeof (alert!.facts as { gapMs?: unknown }).gapMs).toBe('number');
    const lease = (await store.prisma.lease.findUnique({ where: { id: leaseId } }))!;
    expect(lease.holder).not.toBe(before.holder);
    expect(BigInt(lease.token!.toFixed())).toBeGreaterThan(BigInt(before.token!.toFixed()));
    const events = await store.prisma.leaseEvent.findMany({ where: { leaseId }, orderBy: { seq: 'asc' } });
    expect(events.map((e) => e.type)).toContain('acquired');
    expect(events.at(-1)!.previousHolder).toBe(before.holder);
  }, 60_000);

  it('a leader held past held_too_long\'s limit raises it', async () => {
    const path = `${root}/stuck`;
    await start('latch', path, 'p1').saw('LEADER');
    const leaseId = `zk/${path}`;
    await expect.poll(async () => (await store.prisma.alert.findMany({ where: { leaseId, ruleType: 'held_too_long' } })).map((a) => a.state), { timeout: 20_000 }).toEqual(['firing']);
  }, 60_000);
});
