// ZooKeeper leases as Apache Curator makes them, by real Curator participants (curator.ts):
// an InterProcessMutex with two waiters, a LeaderLatch with three participants, and a
// LeaderSelector, each under its own path of one run's root.
import { randomBytes } from 'node:crypto';
import zookeeper from 'node-zookeeper-client';
import type { SourceConfig } from '../../lib/config';
import { startCuratorHolder, type CuratorHolder, type CuratorRecipe } from './curator';
import type { HeldLease, Layout } from './lease-layouts';

/** A plain client of the test ZooKeeper, for what the tests read and write themselves. */
export async function zkClient(connect: string) {
  const client = zookeeper.createClient(connect, { sessionTimeout: 10_000, retries: 0 });
  client.connect();
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ZooKeeper session at ${connect} within 10 s`)), 10_000);
    client.once('connected', () => (clearTimeout(timer), resolve()));
  });
  const call = <T>(start: (cb: (error: unknown, value: T) => void) => void) => new Promise<T>((resolve, reject) => start((e, v) => (e ? reject(e as Error) : resolve(v))));
  return {
    client,
    children: (path: string) => call<string[]>((cb) => client.getChildren(path, (e, c) => cb(e, c))).catch((e: { code?: number }) => (e.code === zookeeper.Exception.NO_NODE ? [] : Promise.reject(e))),
    create: (path: string, data: Buffer, mode = zookeeper.CreateMode.PERSISTENT) => call<string>((cb) => client.create(path, data, mode, (e, p) => cb(e, p))),
    mkdirp: (path: string) => call<string>((cb) => client.mkdirp(path, (e, p) => cb(e, p))),
    close: () => client.close(),
  };
}

/** Waits until `path` has `count` children (Curator's nodes are made a moment after the process starts). */
export async function untilChildren(connect: string, path: string, count: number, timeoutMs = 20_000) {
  const zk = await zkClient(connect);
  try {
    const deadline = Date.now() + timeoutMs;
    for (let n = (await zk.children(path)).length; n < count; n = (await zk.children(path)).length) {
      if (Date.now() > deadline) throw new Error(`${path} has ${n} children, not ${count}, after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    zk.close();
  }
}

const session = '\\(session 0x[0-9a-f]+\\)';

/** Starts the holder, waits until it holds, then the queued ones, until their nodes exist. */
async function participants(connect: string, recipe: CuratorRecipe, path: string, ids: string[], holds: string): Promise<CuratorHolder[]> {
  const [first, ...rest] = ids;
  const holders = [startCuratorHolder({ connect, recipe, path, id: first! })];
  await holders[0]!.saw(holds);
  for (const id of rest) {
    holders.push(startCuratorHolder({ connect, recipe, path, id }));
    await untilChildren(connect, path, holders.length);
  }
  return holders;
}

export function zookeeperLayouts(connect: () => string): Layout[] {
  const root = `/lh${randomBytes(3).toString('hex')}`;
  const config = (): SourceConfig => ({ name: 'zookeeper', backend: 'zookeeper', connect: connect(), paths: [root], sessionTimeoutMs: 10_000 });
  const held = (path: string, kind: HeldLease['kind'], holder: RegExp, candidates: RegExp[], holders: CuratorHolder[]): HeldLease => ({
    key: path,
    holder,
    token: 'any',
    ttlMs: null,
    kind,
    candidates,
    async release() {
      // The queued ones go first, so that nobody takes over: then the holder lets go as Curator does.
      for (const queued of holders.slice(1).reverse()) await queued.stop();
      holders[0]!.release();
      await holders[0]!.saw('RELEASED').finally(() => holders[0]!.stop());
    },
  });
  return [
    {
      name: 'zookeeper: Curator InterProcessMutex with two waiters',
      source: config,
      async hold(label) {
        const path = `${root}/locks/${label}`;
        const holders = await participants(connect(), 'mutex', path, ['m1', 'm2', 'm3'], 'HELD');
        // InterProcessMutex writes the client's address as the node's data.
        const address = new RegExp(`^127\\.0\\.[01]\\.1 ${session}$`);
        return held(path, 'lock', address, [address, address], holders);
      },
    },
    {
      name: 'zookeeper: Curator LeaderLatch with three participants',
      source: config,
      async hold(label) {
        const path = `${root}/latches/${label}`;
        const holders = await participants(connect(), 'latch', path, ['p1', 'p2', 'p3'], 'LEADER');
        return held(path, 'election', new RegExp(`^p1 ${session}$`), [new RegExp(`^p2 ${session}$`), new RegExp(`^p3 ${session}$`)], holders);
      },
    },
    {
      name: 'zookeeper: Curator LeaderSelector with a queued participant',
      source: config,
      async hold(label) {
        const path = `${root}/selectors/${label}`;
        const holders = await participants(connect(), 'selector', path, ['sel-1', 'sel-2'], 'HELD');
        return held(path, 'lock', new RegExp(`^sel-1 ${session}$`), [new RegExp(`^sel-2 ${session}$`)], holders);
      },
    },
  ];
}
