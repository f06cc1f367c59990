// The demo fleet's ZooKeeper leader (lib/demo/zookeeper-leader.ts) on the test ZooKeeper, read
// by the ZooKeeper source as it reads a real Curator LeaderLatch: one leads, the others queue
// in order; a leader that steps down hands over at once; a force-release is noticed by the
// leader (it stops leading) and the next in line leads with a higher czxid.
import { afterEach, describe, expect, it } from 'vitest';
import { latchOrder, runZookeeperLeader } from '../../lib/demo/zookeeper-leader';
import { checkRequest } from '../../lib/sources/force';
import type { ZookeeperSourceConfig } from '../../lib/sources/zookeeper/config';
import { createZookeeperForce } from '../../lib/sources/zookeeper/force';
import { createZookeeperSource } from '../../lib/sources/zookeeper/index';
import { testServices } from '../support/services';

const services = testServices();
const path = `/lhd${Math.random().toString(36).slice(2, 8)}/indexer`;
const config = (): ZookeeperSourceConfig => ({ name: 'zk', backend: 'zookeeper', connect: services.zookeeper, paths: [path], sessionTimeoutMs: 10_000 });

type Member = { id: string; stop: AbortController; done: Promise<void>; leading: string | null; terms: number; errors: unknown[] };
const members: Member[] = [];

function member(id: string): Member {
  const stop = new AbortController();
  const m: Member = { id, stop, done: Promise.resolve(), leading: null, terms: 0, errors: [] };
  m.done = runZookeeperLeader(
    {
      connect: services.zookeeper,
      path,
      id,
      sessionTimeoutMs: 4_000,
      onStartedLeading: async (leading, token) => {
        m.leading = token;
        m.terms++;
        await new Promise<void>((resolve) => leading.addEventListener('abort', () => resolve(), { once: true }));
      },
      onStoppedLeading: () => (m.leading = null),
      onError: (error) => m.errors.push(error),
    },
    stop.signal,
  );
  members.push(m);
  return m;
}

const leaders = () => members.filter((m) => m.leading !== null);
const read = async () => {
  const source = createZookeeperSource(config(), 1_000);
  try {
    return (await source.snapshot(AbortSignal.timeout(10_000))).observations.find((o) => o.key === path);
  } finally {
    await source.close();
  }
};

afterEach(async () => {
  for (const m of members) m.stop.abort();
  await Promise.all(members.splice(0).map((m) => m.done));
});

describe('the demo fleet\'s ZooKeeper leader', () => {
  it('orders the latch as Curator does: by what follows the last "latch-"', () => {
    expect(latchOrder(['_c_b-latch-0000000002', 'x', '_c_a-latch-0000000010', 'latch-0000000001'])).toEqual(['latch-0000000001', '_c_b-latch-0000000002', '_c_a-latch-0000000010']);
  });

  it('one leads and the others queue, read as a LeaderLatch; stepping down and a force-release each hand over to the next with a higher czxid', async () => {
    const a = member('server-a');
    await expect.poll(() => a.leading, { timeout: 10_000 }).not.toBeNull();
    const b = member('server-b');
    await expect.poll(async () => (await read())?.candidates.length, { timeout: 10_000 }).toBe(1);
    const c = member('server-c');
    await expect.poll(async () => (await read())?.candidates.length, { timeout: 10_000 }).toBe(2);
    const first = (await read())!;
    expect(first).toMatchObject({ kind: 'election', token: BigInt(a.leading!) });
    expect(first.holder).toMatch(/^server-a \(session 0x[0-9a-f]+\)$/);
    expect(first.candidates.map((x) => x.holder!.split(' ')[0])).toEqual(['server-b', 'server-c']);
    expect(leaders()).toEqual([a]);

    // a steps down: b leads at once (its node is deleted, not left to its session's timeout).
    a.stop.abort();
    await a.done;
    await expect.poll(() => b.leading, { timeout: 2_000 }).not.toBeNull();
    expect(BigInt(b.leading!)).toBeGreaterThan(first.token!);

    // Leasehold force-releases b: b notices and stops leading, c leads.
    const seen = (await read())!;
    expect(seen.holder).toMatch(/^server-b /);
    const force = createZookeeperForce(config());
    try {
      await force.execute(checkRequest({ action: 'force-release', key: path, expectedHolder: seen.holder!, expectedToken: String(seen.token) }), AbortSignal.timeout(10_000));
    } finally {
      await force.close();
    }
    await expect.poll(() => c.leading, { timeout: 5_000 }).not.toBeNull();
    expect(BigInt(c.leading!)).toBeGreaterThan(seen.token!);
    await expect.poll(() => b.terms === 1 && b.leading === null, { timeout: 5_000 }).toBe(true);
    expect(leaders()).toEqual([c]);
    expect([...a.errors, ...b.errors, ...c.errors]).toEqual([]);
  }, 60_000);
});
