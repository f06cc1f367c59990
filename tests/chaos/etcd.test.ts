// Chaos on etcd, a three-member cluster of the suite's own: the Raft leader killed; two of
// three members stopped for 10 s (no quorum); a compaction past the revision a source's
// watch would resume from.
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SourceConfig } from '../../lib/config';
import { startEtcdCluster, type EtcdCluster } from '../support/etcd-cluster';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import { sleep, startWorld, uid, type Layout, type World } from './world';

const run = `chaos${uid()}`;
let cluster: EtcdCluster;
let proxy: TcpProxy;
let world: World;
let etcd: Etcd3;
const layout = (): Layout => ({ source: 'etcd', client: { backend: 'etcd', endpoints: cluster.endpoints }, key: (l) => `${run}/lock/${l}`, leaseId: (k) => `etcd/${k}` });
const farLayout = (): Layout => ({ source: 'watched', client: { backend: 'etcd', endpoints: cluster.endpoints }, key: (l) => `${run}-w/lock/${l}`, leaseId: (k) => `watched/${k}` });

beforeAll(async () => {
  cluster = await startEtcdCluster(27379);
  proxy = await startTcpProxy('127.0.0.1', cluster.members[0]!.clientPort);
  const sources = [
    { name: 'etcd', backend: 'etcd', endpoints: cluster.endpoints, prefixes: [`${run}/`] },
    // One endpoint, behind a proxy: its watch can be cut off while the cluster goes on.
    { name: 'watched', backend: 'etcd', endpoints: [`http://127.0.0.1:${proxy.port}`], prefixes: [`${run}-w/`] },
  ] as SourceConfig[];
  world = await startWorld({ sources });
  for (const label of ['digest', 'billing', 'reports']) await world.hold(layout(), label);
  for (const label of ['mailer', 'indexer']) await world.hold(farLayout(), label);
  await world.observed(world.holders);
  etcd = new Etcd3({ hosts: cluster.endpoints });
}, 120_000);

afterAll(async () => {
  etcd?.close();
  await world?.stop();
  await proxy?.close();
  await cluster?.stop();
});

/** When `port`'s member first answers a linearizable read (a quorum is back), polled every 20 ms. */
async function quorumBackAt(port: number): Promise<number> {
  for (;;) {
    const ok = await fetch(`http://127.0.0.1:${port}/v3/kv/range`, { method: 'POST', body: JSON.stringify({ key: Buffer.from('probe').toString('base64') }), signal: AbortSignal.timeout(300) })
      .then((r) => r.ok)
      .catch(() => false);
    if (ok) return Date.now();
    await sleep(20);
  }
}

async function leaderName(): Promise<string> {
  const status = await etcd.maintenance.status();
  const members = await etcd.cluster.memberList({});
  return members.members.find((m) => String(m.ID) === String(status.leader))!.name;
}

describe('chaos: etcd', () => {
  it('the Raft leader killed and restarted: a new leader, nothing invented, forced once', async () => {
    const victim = await world.hold(layout(), 'victim');
    await world.observed([victim]);
    const fault = world.fault('etcd leader killed (3 members)', { source: 'etcd', down: false });
    await fault.begin();
    const name = await leaderName();
    const member = cluster.members.find((m) => m.name === name)!;
    await member.kill();
    await sleep(3_000);
    expect(await world.forceExpire(victim)).toBe('done');
    await member.restart();
    fault.recovered();
    const detail = (await world.store.prisma.source.findUniqueOrThrow({ where: { name: 'etcd' } })).detail as { leader?: string } | null;
    expect(detail?.leader).not.toBe(name);
    await fault.check();
  });

  it('two of three members stopped for 10 s: down and stale while there is no quorum, back within a read deadline and two polls', async () => {
    // The member left answers no read without a quorum: it hangs, it does not refuse.
    const fault = world.fault('etcd: two of three members stopped for 10 s', { source: 'etcd', down: true, hangs: true });
    await fault.begin();
    const [a, b] = cluster.members.filter((m) => m.clientPort !== cluster.members[0]!.clientPort);
    const began = Date.now();
    await Promise.all([a!.kill(), b!.kill()]);
    await fault.whileDown(15_000);
    await sleep(Math.max(0, 10_000 - (Date.now() - began)));
    const back = quorumBackAt(cluster.members[0]!.clientPort);
    await Promise.all([a!.restart(), b!.restart()]);
    fault.recovered(await back);
    await fault.check();
  });

  // Once a race (about one run in three on a loaded machine): a read made when the proxy let go
  // found the successor before the resumed watch reported the compaction, and the change was
  // recorded as a takeover. The source now says the watch was cut off the moment it is
  // (lib/sources/etcd/watch.ts), and every read until a full read begun after that is judged
  // across the gap (lib/collector/observe-source.ts).
  it("a compaction past the revision the source's watch resumes from: the gap is said, nothing invented", async () => {
    const changing = await world.hold(farLayout(), 'changing');
    // The quorum's loss reached this source too: it starts from a fresh read.
    await world.observed(world.holders.filter((h) => h.layout.source === 'watched'));
    const fault = world.fault('etcd compaction past the watch revision', { source: 'watched', down: false, steady: world.holders.filter((h) => h.layout.source === 'watched' && h !== changing) });
    await fault.begin();
    // Cut the watch off; behind its back the lease changes hands and the history is compacted.
    proxy.partition(true);
    proxy.reset();
    expect(await changing.client.release(changing.lease)).toBe(true);
    await changing.stop();
    world.holders.splice(world.holders.indexOf(changing), 1);
    const next = await world.hold({ ...farLayout(), key: () => changing.key }, 'successor');
    const { header } = await etcd.kv.range({ key: Buffer.from(changing.key) });
    await etcd.kv.compact({ revision: header.revision, physical: true });
    proxy.partition(false);
    proxy.reset();
    fault.recovered();
    // The successor is seen, and the lease's history says Leasehold could not watch the change.
    await world.observed([next]);
    const types: string[] = (await world.store.prisma.leaseEvent.findMany({ where: { leaseId: changing.leaseId }, orderBy: { seq: 'asc' } })).map((e) => e.type);
    expect(types[0], types.join()).toBe('acquired');
    expect(types, types.join()).toContain('observation_gap');
    await fault.check();
  });
});
