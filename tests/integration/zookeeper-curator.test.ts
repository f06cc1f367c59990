// The ZooKeeper source against real Curator participants (tests/support/curator.ts) on the test
// ZooKeeper: a killed holder's node goes when its session expires and the next in line is seen
// holding with a higher czxid, by watch; a paused holder is held until its session expires,
// then released; force-release acts only on the node the person saw; hostile znodes cost
// bounded time and show as what they are.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Observation } from '../../lib/domain/observe';
import { checkRequest, ForceConflictError } from '../../lib/sources/force';
import type { ZookeeperSourceConfig } from '../../lib/sources/zookeeper/config';
import { createZookeeperForce } from '../../lib/sources/zookeeper/force';
import { createZookeeperSource } from '../../lib/sources/zookeeper/index';
import type { ChangeHint } from '../../lib/sources/types';
import { startCuratorHolder, type CuratorHolder } from '../support/curator';
import { testServices } from '../support/services';
import { untilChildren, zkClient } from '../support/zookeeper-layouts';

const services = testServices();
const root = `/lhi${Math.random().toString(36).slice(2, 8)}`;
const SESSION_MS = 4_000;
const config = (): ZookeeperSourceConfig => ({ name: 'zk', backend: 'zookeeper', connect: services.zookeeper, paths: [root], sessionTimeoutMs: 10_000 });
const holders: CuratorHolder[] = [];
const start = (path: string, id: string) => {
  const holder = startCuratorHolder({ connect: services.zookeeper, recipe: 'mutex', path, id, sessionMs: SESSION_MS });
  holders.push(holder);
  return holder;
};

/** A source whose watch runs, and the last observation of each lease as hints had it read. */
function watched() {
  const source = createZookeeperSource(config(), 1_000);
  const stop = new AbortController();
  const seen = new Map<string, { observation: Observation | undefined; atMs: number }>();
  const onHint = (hint: ChangeHint) => {
    const read = hint.keys ? source.readKeys!(hint.keys, AbortSignal.timeout(5_000)) : source.snapshot(AbortSignal.timeout(5_000)).then((s) => ({ covered: s.observations.map((o) => o.key), observations: s.observations }));
    void read.then(({ covered, observations }) => {
      for (const key of covered) seen.set(key, { observation: observations.find((o) => o.key === key), atMs: performance.now() });
    }, () => {});
  };
  void source.watch!(onHint, stop.signal);
  return {
    source,
    seen,
    async first() {
      const { observations } = await source.snapshot(AbortSignal.timeout(10_000));
      for (const o of observations) seen.set(o.key, { observation: o, atMs: performance.now() });
    },
    async close() {
      stop.abort();
      await source.close();
    },
  };
}

beforeAll(async () => {
  const zk = await zkClient(services.zookeeper);
  await zk.mkdirp(root);
  zk.close();
});
afterAll(async () => {
  await Promise.all(holders.map((h) => h.stop()));
});

describe('Curator holders that die, pause and are forced', () => {
  it('a SIGKILLed holder: its node goes when the session expires, and the next in line is seen holding with a higher czxid', async () => {
    const path = `${root}/killed`;
    const first = start(path, 'a');
    await first.saw('HELD');
    const second = start(path, 'b');
    await untilChildren(services.zookeeper, path, 2);
    const w = watched();
    try {
      await w.first();
      const before = w.seen.get(path)!.observation!;
      expect(before.candidates).toHaveLength(1);
      const killedAt = performance.now();
      first.signal('SIGKILL');
      await expect.poll(() => w.seen.get(path)?.observation?.token ?? 0n, { timeout: SESSION_MS + 5_000, interval: 50 }).toBeGreaterThan(before.token!);
      const after = w.seen.get(path)!;
      expect(after.observation!.holder).toBe(before.candidates[0]!.holder);
      expect(after.observation!.token).toBe(before.candidates[0]!.token);
      // ZooKeeper expires a session between its timeout and one tick (1 s here) after it; the watch adds milliseconds.
      expect(after.atMs - killedAt).toBeLessThan(SESSION_MS + 1_000 + 500);
      await second.saw('HELD');
    } finally {
      await w.close();
    }
  }, 60_000);

  it('a SIGSTOPped holder is held while only paused, then released once its session expires', async () => {
    const path = `${root}/paused`;
    const first = start(path, 'a');
    await first.saw('HELD');
    const w = watched();
    try {
      await w.first();
      const before = w.seen.get(path)!.observation!;
      first.signal('SIGSTOP');
      // Paused for less than its session: nothing is invented.
      await new Promise((resolve) => setTimeout(resolve, SESSION_MS / 2));
      const { observations } = await w.source.snapshot(AbortSignal.timeout(5_000));
      expect(observations.find((o) => o.key === path)).toMatchObject({ holder: before.holder, token: before.token });
      // Past it: the server expires the session and deletes the node; the watch says so.
      await expect.poll(() => w.seen.get(path)?.observation, { timeout: SESSION_MS + 5_000, interval: 100 }).toBeUndefined();
      first.signal('SIGCONT');
    } finally {
      await w.close();
    }
  }, 60_000);

  it('force-release deletes only the node the person saw (a stale expectation is a conflict), and the next in line holds with a higher czxid', async () => {
    const path = `${root}/forced`;
    const first = start(path, 'a');
    await first.saw('HELD');
    const second = start(path, 'b');
    await untilChildren(services.zookeeper, path, 2);
    const source = createZookeeperSource(config(), 1_000);
    const force = createZookeeperForce(config());
    try {
      const seen = (await source.snapshot(AbortSignal.timeout(10_000))).observations.find((o) => o.key === path)!;
      const stale = checkRequest({ action: 'force-release', key: path, expectedHolder: seen.holder!, expectedToken: String(seen.token! - 1n) });
      const conflict = await force.execute(stale, AbortSignal.timeout(10_000)).catch((e: unknown) => e);
      expect(conflict).toBeInstanceOf(ForceConflictError);
      expect((conflict as ForceConflictError).current).toEqual({ holder: seen.holder, token: String(seen.token) });
      const plan = await force.plan(checkRequest({ action: 'force-release', key: path, expectedHolder: seen.holder!, expectedToken: String(seen.token) }), AbortSignal.timeout(10_000));
      expect(plan.detail).toMatchObject({ matchesWhatYouSaw: true, queued: 1 });
      const done = await force.execute(checkRequest({ action: 'force-release', key: path, expectedHolder: seen.holder!, expectedToken: String(seen.token) }), AbortSignal.timeout(10_000));
      expect(BigInt(done.newToken!)).toBeGreaterThan(seen.token!);
      await second.saw('HELD');
      const now = (await source.snapshot(AbortSignal.timeout(10_000))).observations.find((o) => o.key === path)!;
      expect(now.holder).toBe(seen.candidates[0]!.holder);
      expect(now.token).toBeGreaterThan(seen.token!);
    } finally {
      await source.close();
      await force.close();
    }
  }, 60_000);
});

describe('a configured path nobody has made yet', () => {
  it('is watched for its creation: the first lock under it comes as a hint, not at the next full read', async () => {
    const later = `${root}-later`;
    const source = createZookeeperSource({ ...config(), paths: [later] }, 1_000);
    const stop = new AbortController();
    const hints: ChangeHint[] = [];
    try {
      void source.watch!((hint) => hints.push(hint), stop.signal);
      expect((await source.snapshot(AbortSignal.timeout(10_000))).observations).toEqual([]);
      const holder = start(`${later}/locks/first`, 'a');
      await holder.saw('HELD');
      await expect.poll(() => hints.some((h) => h.full), { timeout: 2_000 }).toBe(true);
      expect((await source.snapshot(AbortSignal.timeout(10_000))).observations.map((o) => o.key)).toEqual([`${later}/locks/first`]);
    } finally {
      stop.abort();
      await source.close();
    }
  }, 60_000);
});

describe('a lock whose emptied parent ZooKeeper reaped', () => {
  it('is watched for its creation: the next acquisition after the parent is made again comes as a hint for that lease', async () => {
    const path = `${root}/reaped`;
    const first = start(path, 'a');
    await first.saw('HELD');
    const source = createZookeeperSource(config(), 1_000);
    const stop = new AbortController();
    const hints: ChangeHint[] = [];
    try {
      void source.watch!((hint) => hints.push(hint), stop.signal);
      await source.snapshot(AbortSignal.timeout(10_000));
      first.release();
      await first.saw('RELEASED');
      // The release comes as a hint for the lease; reading it finds the lock empty...
      await expect.poll(() => hints.some((h) => h.keys?.includes(path)), { timeout: 2_000 }).toBe(true);
      // ...and ZooKeeper reaps the empty container parent (done here at once), deleting the node.
      const zk = await zkClient(services.zookeeper);
      await new Promise<void>((resolve, reject) => zk.client.remove(path, -1, (e) => (e ? reject(e) : resolve())));
      zk.close();
      await source.readKeys!([path], AbortSignal.timeout(5_000));
      hints.length = 0;
      const second = start(path, 'b');
      await second.saw('HELD');
      await expect.poll(() => hints.some((h) => h.keys?.includes(path)), { timeout: 2_000 }).toBe(true);
      expect((await source.readKeys!([path], AbortSignal.timeout(5_000))).observations).toHaveLength(1);
    } finally {
      stop.abort();
      await source.close();
    }
  }, 60_000);
});

describe('hostile znodes', () => {
  it('binary data, 1 MB of data, 10,000 children and names that are not Curator\'s: read in bounded time, shown as what they are', async () => {
    const zk = await zkClient(services.zookeeper);
    const hostile = `${root}/hostile`;
    try {
      await zk.mkdirp(`${hostile}/binary`);
      await zk.create(`${hostile}/binary/lock-0000000001`, Buffer.from([0, 1, 2, 0xff, 0x1b, 0x5b, 0x33, 0x31, 0x6d]));
      await zk.create(`${hostile}/binary/not-curator`, Buffer.from('x'));
      await zk.mkdirp(`${hostile}/huge`);
      await zk.create(`${hostile}/huge/latch-0000000007`, Buffer.alloc(1_000_000, 0x41));
      await zk.mkdirp(`${hostile}/many`);
      await Promise.all(Array.from({ length: 10_000 }, (_, i) => zk.create(`${hostile}/many/child-${i}`, Buffer.alloc(0))));
      const source = createZookeeperSource(config(), 1_000);
      try {
        const startedAt = performance.now();
        const { observations, unread } = await source.snapshot(AbortSignal.timeout(30_000));
        const tookMs = performance.now() - startedAt;
        const binary = observations.find((o) => o.key === `${hostile}/binary`)!;
        // Escaped, never raw control bytes; a persistent node (no session) is named as it is.
        expect(binary.holder).toBe('\\x00\\x01\\x02\\xff\\x1b[31m');
        expect(binary.detail).toMatchObject({ otherChildren: 1, session: null });
        const huge = observations.find((o) => o.key === `${hostile}/huge`)!;
        expect(huge.kind).toBe('election');
        expect(huge.holder!.length).toBeLessThan(400);
        expect(huge.holder).toMatch(/\[1000000 bytes, sha256:[0-9a-f]{32}\]$/);
        // 10,000 children that are not Curator's make no lease, and the read stays bounded.
        expect(observations.some((o) => o.key.startsWith(`${hostile}/many`))).toBe(false);
        expect(unread).toBeUndefined();
        expect(tookMs).toBeLessThan(20_000);
      } finally {
        await source.close();
      }
    } finally {
      zk.close();
    }
  }, 120_000);
});
