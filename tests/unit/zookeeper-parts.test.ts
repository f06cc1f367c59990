// The pure parts of the ZooKeeper source: Curator's node names and their order, czxid and
// session ids, the servers' four-letter words, and the limit on data reads in flight.
import { describe, expect, it } from 'vitest';
import { curatorNode, curatorQueue, quarantineName, sessionOf, zxidOf } from '../../lib/sources/zookeeper/curator';
import { limiter } from '../../lib/sources/zookeeper/read';
import { parseStatus } from '../../lib/sources/zookeeper/words';

describe('Curator layouts', () => {
  it('reads plain and protected lock and latch nodes, and nothing else', () => {
    expect(curatorNode('lock-0000000007')).toMatchObject({ recipe: 'lock', sequence: '0000000007', protectedId: null });
    expect(curatorNode('_c_0b3e7c1e-1111-2222-3333-444455556666-latch-0000000012')).toMatchObject({ recipe: 'latch', sequence: '0000000012', protectedId: '0b3e7c1e-1111-2222-3333-444455556666' });
    for (const name of ['lock-7', 'lock-00000000071', 'leases', 'x'.repeat(300) + 'lock-0000000001', 'lock-000000000a']) expect(curatorNode(name), name).toBeNull();
  });

  it('orders a queue as Curator serves it, by sequence, whatever the protected prefix; counts the children that are not Curator\'s', () => {
    const queue = curatorQueue(['_c_ffffffff-1111-2222-3333-444455556666-lock-0000000003', 'lock-0000000010', '_c_00000000-1111-2222-3333-444455556666-lock-0000000002', 'stray', 'latch-0000000001']);
    expect(queue!.recipe).toBe('lock');
    expect(queue!.nodes.map((n) => n.sequence)).toEqual(['0000000002', '0000000003', '0000000010']);
    expect(queue!.others).toBe(2);
    expect(curatorQueue(['a', 'b'])).toBeNull();
  });

  it('puts Leasehold\'s quarantine node before every candidate, with its end; a name that only looks like one is not', () => {
    const quarantine = quarantineName('lock', 1_796_000_000_123);
    const queue = curatorQueue(['lock-0000000000', quarantine, '_c_00000000-1111-2222-3333-444455556666-lock-0000000001']);
    expect(queue!.nodes[0]).toMatchObject({ name: quarantine, sequence: '', quarantineUntilMs: 1_796_000_000_123 });
    expect(queue!.nodes.map((n) => n.sequence)).toEqual(['', '0000000000', '0000000001']);
    expect(curatorNode('leasehold-quarantine-12-lock-')).toBeNull();
    expect(curatorNode('x-leasehold-quarantine-1796000000123-lock-')).toBeNull();
    expect(curatorNode(quarantineName('latch', 5))).toMatchObject({ recipe: 'latch', quarantineUntilMs: 5 });
  });

  it('reads a czxid beyond 2^63 and names a session as ZooKeeper does; a persistent node has none', () => {
    expect(zxidOf(Buffer.from('ffffffffffffffff', 'hex'))).toBe(2n ** 64n - 1n);
    expect(zxidOf(Buffer.from('0102', 'hex'))).toBeNull();
    expect(sessionOf(Buffer.from('0100000772180000', 'hex'))).toBe('0x100000772180000');
    expect(sessionOf(Buffer.alloc(8))).toBeNull();
  });
});

describe('four-letter words', () => {
  it('reads srvr and mntr, and says so when the server does not allow them', () => {
    const srvr = 'Zookeeper version: 3.8.0-abc, built on x\nLatency min/avg/max: 0/0.5/9\nReceived: 1\nSent: 0\nConnections: 3\nOutstanding: 2\nZxid: 0x1a\nMode: follower\nNode count: 9\n';
    expect(parseStatus('127.0.0.1:2181', srvr, null)).toMatchObject({ mode: 'follower', zxid: '0x1a', latencyAvgMs: 0.5, latencyMaxMs: 9, outstanding: 2, connections: 3, nodeCount: 9, version: '3.8.0', problem: null });
    expect(parseStatus('127.0.0.1:2181', srvr, 'zk_avg_latency\t1.5\nzk_outstanding_requests\t7\n')).toMatchObject({ latencyAvgMs: 1.5, outstanding: 7 });
    expect(parseStatus('127.0.0.1:2181', 'srvr is not executed because it is not in the whitelist.\n', null).problem).toMatch(/does not allow the four-letter word srvr/);
    expect(parseStatus('127.0.0.1:2181', 'HTTP/1.1 400 Bad Request\n', null).problem).toMatch(/not a ZooKeeper server's/);
  });
});

describe('data reads in flight', () => {
  it('never runs more than its slots at once, and runs every work given', async () => {
    const limit = limiter(3);
    let running = 0;
    let most = 0;
    const done = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        limit(async () => {
          most = Math.max(most, ++running);
          await new Promise((resolve) => setTimeout(resolve, 2));
          running--;
          return i;
        }),
      ),
    );
    expect(most).toBe(3);
    expect(done).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });
});
