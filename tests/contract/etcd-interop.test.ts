// Our etcd elections use the key layout of etcd's own concurrency package, so etcd's own
// tools agree with us about who leads: `etcdctl elect --listen` shows our leader, and our
// elector queues behind a leader that `etcdctl elect` made.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createLeaderElector, createLeaseClient } from '../../lib/lease';
import { testServices } from '../support/services';

const endpoint = testServices().etcdEndpoints[0]!;
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

function etcdctl(args: string[]) {
  const child = spawn('etcdctl', [`--endpoints=${endpoint}`, ...args], { env: { ...process.env, ETCDCTL_API: '3' } });
  children.push(child);
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output };
}

describe('etcd interop', () => {
  it('etcdctl elect --listen sees our elector as the leader', async () => {
    const prefix = `interop/${randomBytes(4).toString('hex')}`;
    const client = createLeaseClient({ backend: 'etcd', endpoints: [endpoint] });
    const stop = new AbortController();
    let token: bigint | null = null;
    const run = createLeaderElector({
      client,
      key: prefix,
      holder: 'digest-scheduler',
      ttlMs: 3_000,
      renewEveryMs: 500,
      onStartedLeading: (_signal, t) => {
        token = t;
      },
    }).run(stop.signal);
    try {
      await expect.poll(() => token, { timeout: 10_000 }).not.toBeNull();
      const listener = etcdctl(['elect', '--listen', prefix]);
      const expectedValue = `digest-scheduler:${client.instance}`;
      await expect.poll(() => listener.output(), { timeout: 10_000 }).toContain(expectedValue);
      // The key etcdctl reports is ours: <prefix>/<lease id in hex>.
      const [key] = listener.output().split('\n');
      expect(key).toMatch(new RegExp(`^${prefix}/[0-9a-f]+$`));
    } finally {
      stop.abort();
      await run;
      await client.close();
    }
  }, 30_000);

  it('our elector waits behind a leader elected by etcdctl, and leads once it resigns', async () => {
    const prefix = `interop/${randomBytes(4).toString('hex')}`;
    const campaigner = etcdctl(['elect', prefix, 'etcdctl-leader']);
    await expect.poll(() => campaigner.output(), { timeout: 10_000 }).toContain('etcdctl-leader');
    const client = createLeaseClient({ backend: 'etcd', endpoints: [endpoint] });
    const stop = new AbortController();
    let leading = false;
    const run = createLeaderElector({
      client,
      key: prefix,
      holder: 'ours',
      ttlMs: 3_000,
      renewEveryMs: 300,
      onStartedLeading: () => {
        leading = true;
      },
    }).run(stop.signal);
    try {
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      expect(leading).toBe(false);
      // etcdctl resigns on SIGINT: its key is deleted and we are next in line.
      campaigner.child.kill('SIGINT');
      await expect.poll(() => leading, { timeout: 10_000 }).toBe(true);
    } finally {
      stop.abort();
      await run;
      await client.close();
    }
  }, 30_000);
});
