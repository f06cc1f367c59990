// A Leasehold server in an outage, as tests/e2e/outage.spec.ts and bench/outage-bench.ts open
// it: `next start` (through tests/e2e/serve.ts, on an embedded store) observing two Redis
// servers started here and an etcd endpoint where nothing listens. A lease is taken on each
// Redis and seen held, the server's pages are served once (a server that has been running),
// then both Redis servers are stopped and every source reads as down. Loopback only.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLeaseClient } from '../../lib/lease';
import { startRedisServer, type RedisServer } from './redis-servers';
import { ROOT } from './services';

export type OutageServerOptions = {
  /** The server's port. */
  port: number;
  /** The two Redis servers' ports. */
  redisPorts: [number, number];
  /** An etcd endpoint where nothing listens (a source that was never readable). */
  deadEtcd: string;
  /** The server's stdout: the spec shows it, the bench does not. */
  stdout: 'inherit' | 'ignore';
};

export type OutageServer = {
  url: string;
  /** The leases taken (redis-a's, then redis-b's), as the server names them. */
  leaseIds: string[];
  /** The Redis servers' addresses, as the banner names them. */
  redisUrls: string[];
  /** Stops the server and whatever of the Redis servers still runs; removes the config. */
  stop(): Promise<void>;
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const started = performance.now();
  while (!(await check().catch(() => false))) {
    if (performance.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await sleep(250);
  }
}

export async function startOutageServer(options: OutageServerOptions): Promise<OutageServer> {
  const url = `http://127.0.0.1:${options.port}`;
  const redis: RedisServer[] = [];
  const configDir = mkdtempSync(path.join(os.tmpdir(), 'leasehold-outage-'));
  let server: ChildProcess | undefined;
  const stop = async () => {
    for (const instance of redis) await instance.stop().catch(() => {});
    if (server && server.exitCode === null) {
      const exited = new Promise((resolve) => server!.once('exit', resolve));
      server.kill('SIGTERM');
      await exited;
    }
    rmSync(configDir, { recursive: true, force: true });
  };
  const json = async <T>(route: string): Promise<T> => (await (await fetch(url + route)).json()) as T;
  try {
    for (const port of options.redisPorts) redis.push(await startRedisServer(port));
    const config = path.join(configDir, 'leasehold.config.json');
    writeFileSync(
      config,
      JSON.stringify({
        pollMs: 500,
        sources: [
          { name: 'redis-a', backend: 'redis', urls: [redis[0]!.url], match: ['jobs:*'] },
          { name: 'redis-b', backend: 'redis', urls: [redis[1]!.url], match: ['jobs:*'] },
          { name: 'etcd-never', backend: 'etcd', endpoints: [options.deadEtcd], prefixes: ['/leases/'] },
        ],
      }),
    );
    server = spawn(process.execPath, ['--import', 'tsx', 'tests/e2e/serve.ts', 'config', String(options.port), config], { cwd: ROOT, stdio: ['ignore', options.stdout, 'inherit'] });
    await until('the outage server healthy', async () => (await fetch(`${url}/api/health`)).ok, 170_000);
    // A lease on each Redis, seen held by the server.
    const leaseIds: string[] = [];
    for (const [index, instance] of redis.entries()) {
      const client = createLeaseClient({ backend: 'redis', urls: [instance.url] });
      const lease = await client.acquire('jobs:nightly-report', { holder: `worker-${index + 1}`, ttlMs: 600_000 });
      await client.close();
      if (!lease) throw new Error(`could not take jobs:nightly-report on ${instance.url}`);
      leaseIds.push(`redis-${index === 0 ? 'a' : 'b'}/jobs:nightly-report`);
    }
    await until(
      'the leases seen held',
      async () => {
        const { leases } = await json<{ leases: { id: string; state: string }[] }>('/api/v1/leases');
        return leaseIds.every((id) => leases.some((lease) => lease.id === id && lease.state === 'held'));
      },
      30_000,
    );
    // A server that has been running: its pages were served before (the first request after a
    // start loads the page's modules, which no engineer opening it at 3 a.m. waits for).
    const overview = await fetch(`${url}/`);
    if (overview.status !== 200) throw new Error(`the overview answered ${overview.status} before the outage`);
    await fetch(`${url}/api/v1/alerts?state=firing&limit=100`); // the navigation's count, asked by every page
    // The outage: both Redis servers gone; etcd never answered.
    for (const instance of redis) await instance.stop();
    // Down, and saying what is true now: a read in flight when a server stopped may first have
    // been told the connection closed; a refused connection is what stays (written within 5 s).
    await until(
      'every source down, the Redis ones refusing connections',
      async () => {
        const { sources } = await json<{ sources: { status: string; backend: string; lastError: string | null }[] }>('/api/v1/sources');
        return sources.every((s) => s.status === 'down' && (s.backend !== 'redis' || /refused the connection/.test(s.lastError ?? '')));
      },
      30_000,
    );
    return { url, leaseIds, redisUrls: redis.map((instance) => instance.url), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
