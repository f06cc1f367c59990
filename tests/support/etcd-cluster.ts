// A three-member etcd cluster of the test's own, on loopback, started and stopped by the test
// (etcd is installed by scripts/services.sh). A test that kills a member must own it: the
// cluster `scripts/services.sh up --etcd-cluster` starts may be another checkout's, reused.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, openSync, closeSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export type EtcdMember = { name: string; clientPort: number; process: ChildProcess; kill(): Promise<void>; restart(): Promise<void> };
export type EtcdCluster = { endpoints: string[]; members: EtcdMember[]; stop(): Promise<void> };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function answers(port: number): Promise<boolean> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(1_000) });
    return response.ok && ((await response.json()) as { health?: string }).health === 'true';
  } catch {
    return false;
  }
}

/** Client ports basePort, basePort + 100, basePort + 200; each member's peer port is its client port + 1. */
export async function startEtcdCluster(basePort: number): Promise<EtcdCluster> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'leasehold-etcd-cluster-'));
  const token = `leasehold-test-${randomBytes(4).toString('hex')}`;
  const ports = [0, 1, 2].map((i) => basePort + 100 * i);
  const spec = ports.map((port, i) => `m${i + 1}=http://127.0.0.1:${port + 1}`).join(',');
  const spawnMember = (i: number) => {
    const port = ports[i]!;
    const log = openSync(path.join(dir, `m${i + 1}.log`), 'a');
    const child = spawn(
      'etcd',
      [
        ...['--name', `m${i + 1}`, '--data-dir', path.join(dir, `m${i + 1}`), '--logger=zap', '--log-level=warn'],
        ...['--listen-client-urls', `http://127.0.0.1:${port}`, '--advertise-client-urls', `http://127.0.0.1:${port}`],
        ...['--listen-peer-urls', `http://127.0.0.1:${port + 1}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${port + 1}`],
        ...['--initial-cluster', spec, '--initial-cluster-token', token, '--initial-cluster-state', 'new'],
      ],
      { stdio: ['ignore', log, log] },
    );
    closeSync(log);
    return child;
  };
  const members: EtcdMember[] = ports.map((clientPort, i) => {
    const member: EtcdMember = {
      name: `m${i + 1}`,
      clientPort,
      process: spawnMember(i),
      async kill() {
        if (member.process.exitCode !== null || member.process.signalCode !== null) return;
        const exited = new Promise((resolve) => member.process.once('exit', resolve));
        member.process.kill('SIGKILL');
        await exited;
      },
      async restart() {
        await member.kill();
        member.process = spawnMember(i); // its data directory is kept: it rejoins as itself
        await healthy([clientPort]);
      },
    };
    return member;
  });
  const healthy = async (which: number[]) => {
    for (let i = 0; i < 150; i++) {
      if ((await Promise.all(which.map(answers))).every(Boolean)) return;
      await sleep(200);
    }
    throw new Error(`etcd members on ${which.join(', ')} were not healthy within 30 s; logs in ${dir}`);
  };
  try {
    await healthy(ports);
  } catch (error) {
    await Promise.all(members.map((m) => m.kill()));
    throw error;
  }
  return {
    endpoints: ports.map((port) => `http://127.0.0.1:${port}`),
    members,
    async stop() {
      await Promise.all(members.map((m) => m.kill()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
