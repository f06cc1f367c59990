// A quarantine on ZooKeeper against real Curator participants: force-release with a quarantine
// deletes the holder's node and creates Leasehold's node, which Curator sorts before every
// candidate, so nobody holds the lock until the quarantine ends; the source observing the path
// deletes it then, and the next in line holds it. A quarantine no source saw end (the collector
// was down) is ended at the first read after. And a version of 0 is checked, not read as "any".
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import zookeeper from 'node-zookeeper-client';
import { QUARANTINE_HOLDER } from '../../lib/domain/quarantine';
import { checkRequest } from '../../lib/sources/force';
import { commit, deleteAtVersion } from '../../lib/sources/zookeeper/client';
import type { ZookeeperSourceConfig } from '../../lib/sources/zookeeper/config';
import { createZookeeperForce } from '../../lib/sources/zookeeper/force';
import { createZookeeperSource } from '../../lib/sources/zookeeper/index';
import { startCuratorHolder, type CuratorHolder, type CuratorRecipe } from '../support/curator';
import { testServices } from '../support/services';
import { untilChildren, zkClient } from '../support/zookeeper-layouts';

const services = testServices();
const root = `/lhq${Math.random().toString(36).slice(2, 8)}`;
const config = (): ZookeeperSourceConfig => ({ name: 'zk', backend: 'zookeeper', connect: services.zookeeper, paths: [root], sessionTimeoutMs: 10_000 });
const holders: CuratorHolder[] = [];
const QUARANTINE_MS = 3_000;

/** A holder of `recipe` at `path`, and one queued behind it. */
async function pair(recipe: CuratorRecipe, path: string, holds: string) {
  const first = startCuratorHolder({ connect: services.zookeeper, recipe, path, id: 'a' });
  holders.push(first);
  await first.saw(holds);
  const second = startCuratorHolder({ connect: services.zookeeper, recipe, path, id: 'b' });
  holders.push(second);
  await untilChildren(services.zookeeper, path, 2);
  return { first, second };
}

const leaseAtPath = async (source: ReturnType<typeof createZookeeperSource>, path: string) =>
  (await source.snapshot(AbortSignal.timeout(10_000))).observations.find((o) => o.key === path);

beforeAll(async () => {
  const zk = await zkClient(services.zookeeper);
  await zk.mkdirp(root);
  zk.close();
});
afterAll(async () => {
  await Promise.all(holders.map((h) => h.stop()));
});

describe('force-release with a quarantine on ZooKeeper', () => {
  it('an InterProcessMutex: held by leasehold:quarantine (no token) until its end, when the observing source deletes it and the next in line holds', async () => {
    const path = `${root}/mutex`;
    const { second } = await pair('mutex', path, 'HELD');
    const source = createZookeeperSource(config(), 1_000);
    const force = createZookeeperForce(config());
    try {
      const seen = (await leaseAtPath(source, path))!;
      const request = checkRequest({ action: 'force-release', key: path, expectedHolder: seen.holder!, expectedToken: String(seen.token), quarantineMs: QUARANTINE_MS });
      const plan = await force.plan(request, AbortSignal.timeout(10_000));
      expect(plan.steps[0]!.statement).toContain('create(quarantine node, persistent)');
      const done = await force.execute(request, AbortSignal.timeout(10_000));
      expect(done.newToken).toBeNull(); // the quarantine holds no token
      // Nobody may add a child under the quarantine node (it could then not be deleted).
      const zk = await zkClient(services.zookeeper);
      const node = (done.detail as { quarantine: { node: string } }).quarantine.node;
      const refused = await zk.create(`${node}/x`, Buffer.from('x')).catch((e: { code?: number }) => e.code);
      zk.close();
      expect(refused).toBe(zookeeper.Exception.NO_AUTH);
      const until = Date.parse((done.detail as { quarantine: { until: string } }).quarantine.until);
      const during = (await leaseAtPath(source, path))!;
      expect(during).toMatchObject({ holder: QUARANTINE_HOLDER, token: null, candidates: [{ holder: seen.candidates[0]!.holder, token: seen.candidates[0]!.token }] });
      expect(during.detail).toMatchObject({ quarantineUntil: new Date(until).toISOString(), waiting: 1 });
      // Curator's waiter queues behind the quarantine node: it does not take the lock meanwhile.
      await new Promise((resolve) => setTimeout(resolve, QUARANTINE_MS / 2));
      expect(second.printed('HELD')).toBe(false);
      await second.saw('HELD', QUARANTINE_MS + 10_000);
      const heldAt = Date.now();
      expect(heldAt).toBeGreaterThanOrEqual(until - 50);
      expect(heldAt - until).toBeLessThan(2_000);
      const after = (await leaseAtPath(source, path))!;
      expect(after.holder).toBe(seen.candidates[0]!.holder);
      expect(after.token).toBeGreaterThan(seen.token!);
    } finally {
      await source.close();
      await force.close();
    }
  }, 60_000);

  it('a LeaderLatch whose quarantine ended while no source observed it: the first read after deletes it, and the next participant leads', async () => {
    const path = `${root}/latch`;
    const { second } = await pair('latch', path, 'LEADER');
    const force = createZookeeperForce(config());
    const seen = await (async () => {
      const source = createZookeeperSource(config(), 1_000);
      try {
        return (await leaseAtPath(source, path))!;
      } finally {
        await source.close();
      }
    })();
    try {
      await force.execute(checkRequest({ action: 'force-release', key: path, expectedHolder: seen.holder!, expectedToken: String(seen.token), quarantineMs: 1_000 }), AbortSignal.timeout(10_000));
    } finally {
      await force.close();
    }
    // Nobody observes the path: the quarantine outlives its end.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(second.printed('LEADER')).toBe(false);
    const source = createZookeeperSource(config(), 1_000);
    try {
      expect(await leaseAtPath(source, path)).toMatchObject({ kind: 'election', holder: QUARANTINE_HOLDER, token: null });
      await second.saw('LEADER', 10_000);
      expect((await leaseAtPath(source, path))!.token).toBeGreaterThan(seen.token!);
    } finally {
      await source.close();
    }
  }, 60_000);
});

describe('a version check of a node never changed', () => {
  it('checks version 0 (node-zookeeper-client would send it as "any version")', async () => {
    const zk = await zkClient(services.zookeeper);
    const path = `${root}/versioned`;
    try {
      await zk.create(path, Buffer.from('x'));
      await new Promise<void>((resolve, reject) => zk.client.setData(path, Buffer.from('y'), -1, (e) => (e ? reject(e) : resolve())));
      const stale = await commit(deleteAtVersion(zk.client, path, 0), AbortSignal.timeout(5_000), 'delete').catch((e: unknown) => e);
      expect((stale as { code?: number }).code).toBe(zookeeper.Exception.BAD_VERSION);
      expect(await zk.children(root)).toContain('versioned');
      await commit(deleteAtVersion(zk.client, path, 1), AbortSignal.timeout(5_000), 'delete');
      expect(await zk.children(root)).not.toContain('versioned');
    } finally {
      zk.close();
    }
  });
});
