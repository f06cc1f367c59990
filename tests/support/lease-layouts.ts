// Leases in every layout the adapters must read, made by the software that makes them in
// the wild: Leasehold's own client, ShedLock's SQL, Postgres advisory locks, the npm redlock
// package, the etcd3 npm Election, and etcdctl's elect and lock.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Etcd3 } from 'etcd3';
import Redis from 'ioredis';
import pg from 'pg';
import Redlock from 'redlock';
import type { SourceConfig } from '../../lib/config';
import { createLeaderElector, createLeaseClient } from '../../lib/lease';
import type { LeaseSource } from '../../lib/sources/types';
import { createSource } from '../../lib/sources/registry';

export type HeldLease = {
  /** The lease key as the source reports it. */
  key: string;
  holder: string | RegExp;
  /** The expected token; null for an unfenced layout; 'any' when only its presence can be known. */
  token: bigint | null | 'any';
  ttlMs: number | null;
  kind: 'lock' | 'election' | 'advisory';
  candidates?: (string | RegExp)[];
  release(): Promise<void>;
};

export type Layout = {
  name: string;
  source: () => SourceConfig;
  /** Creates what the source config names (tables) before the first read. */
  setup?(): Promise<void>;
  /** Makes a held lease (and queued candidates where the layout has them). */
  hold(label: string): Promise<HeldLease>;
};

const unique = () => randomBytes(3).toString('hex');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function makeSource(layout: Layout): LeaseSource {
  return createSource(layout.source(), 1_000);
}

/** A long-running etcdctl, stopped with SIGINT (which makes elect and lock resign). */
function etcdctl(endpoint: string, args: string[]): { child: ChildProcess; output: () => string; stop(): Promise<void> } {
  const child = spawn('etcdctl', [`--endpoints=${endpoint}`, ...args], { env: { ...process.env, ETCDCTL_API: '3' } });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    output: () => output,
    async stop() {
      if (child.exitCode === null) child.kill('SIGINT');
      await Promise.race([exited, sleep(3_000).then(() => child.kill('SIGKILL'))]);
    },
  };
}

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

export function postgresLayouts(url: () => string): Layout[] {
  const table = `obs_leases_${unique()}`;
  const shedlock = `obs_shedlock_${unique()}`;
  const config = (): SourceConfig => ({
    name: 'pg',
    backend: 'postgres',
    url: url(),
    tables: [
      { table, format: 'leasehold' },
      { table: shedlock, format: 'shedlock' },
    ],
    advisoryLocks: true,
  });
  // Both tables the source config names must exist, or the source is (rightly) down.
  const setup = async () => {
    const sql = new pg.Client(url());
    await sql.connect();
    await sql.query(`CREATE TABLE IF NOT EXISTS ${table} (name VARCHAR(200) PRIMARY KEY, owner VARCHAR(200), expires_at TIMESTAMPTZ NOT NULL, token BIGINT NOT NULL DEFAULT 0)`);
    await sql.query(`CREATE TABLE IF NOT EXISTS ${shedlock} (name VARCHAR(64) NOT NULL, lock_until TIMESTAMP NOT NULL,
                       locked_at TIMESTAMP NOT NULL, locked_by VARCHAR(255) NOT NULL, PRIMARY KEY (name))`);
    await sql.end();
  };
  return [
    {
      name: 'postgres: lib/lease lease table',
      source: config,
      setup,
      async hold(label) {
        const client = createLeaseClient({ backend: 'postgres', url: url(), table });
        const lease = (await client.acquire(label, { holder: 'worker-7', ttlMs: 30_000 }))!;
        return {
          key: `${table}/${label}`,
          holder: lease.holder,
          token: lease.token,
          ttlMs: 30_000,
          kind: 'lock',
          async release() {
            await client.release(lease);
            await client.close();
          },
        };
      },
    },
    {
      name: 'postgres: ShedLock rows written as ShedLock writes them',
      source: config,
      setup,
      async hold(label) {
        const sql = new pg.Client(url());
        await sql.connect();
        // ShedLock's JdbcTemplateLockProvider with usingDbTime(), for PostgreSQL: TIMESTAMP columns in UTC.
        await sql.query(
          `INSERT INTO ${shedlock} (name, lock_until, locked_at, locked_by)
           VALUES ($1, timezone('utc', CURRENT_TIMESTAMP) + cast('30000 millisecond' as interval), timezone('utc', CURRENT_TIMESTAMP), $2)
           ON CONFLICT (name) DO UPDATE SET lock_until = timezone('utc', CURRENT_TIMESTAMP) + cast('30000 millisecond' as interval),
             locked_at = timezone('utc', CURRENT_TIMESTAMP), locked_by = $2
           WHERE ${shedlock}.lock_until <= timezone('utc', CURRENT_TIMESTAMP)`,
          [label, 'app-host-3'],
        );
        return {
          key: `${shedlock}/${label}`,
          holder: 'app-host-3',
          token: null,
          ttlMs: 30_000,
          kind: 'lock',
          async release() {
            // ShedLock's unlock: lock_until back to now (lockAtLeastFor 0).
            await sql.query(`UPDATE ${shedlock} SET lock_until = timezone('utc', CURRENT_TIMESTAMP) WHERE name = $1`, [label]);
            await sql.end();
          },
        };
      },
    },
    {
      name: 'postgres: advisory lock with a waiter',
      source: config,
      setup,
      async hold() {
        const lockKey = Math.floor(Math.random() * 2 ** 31);
        const holder = new pg.Client({ connectionString: url(), application_name: 'migrator' });
        const waiter = new pg.Client({ connectionString: url(), application_name: 'second-migrator' });
        await holder.connect();
        await waiter.connect();
        await holder.query('SELECT pg_advisory_lock($1::bigint)', [lockKey]);
        const holderPid = (await holder.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
        const waiterPid = (await waiter.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
        const waiting = waiter.query('SELECT pg_advisory_lock($1::bigint)', [lockKey]).catch(() => {});
        return {
          key: `advisory/${lockKey}`,
          holder: new RegExp(`^pid ${holderPid} migrator @ 127\\.0\\.0\\.1$`),
          token: null,
          ttlMs: null,
          kind: 'advisory',
          candidates: [new RegExp(`^pid ${waiterPid} second-migrator`)],
          async release() {
            await holder.end();
            await waiting;
            await waiter.end();
          },
        };
      },
    },
  ];
}

export function redisLayouts(redisUrl: () => string): Layout[] {
  const config = (): SourceConfig => ({
    name: 'redis',
    backend: 'redis',
    urls: [redisUrl()],
    match: ['obs:*'],
    fenceSuffix: ':fence',
    keyspaceNotifications: 'auto',
  });
  return [
    {
      name: 'redis: lib/lease (SET NX PX + fence counter)',
      source: config,
      async hold(label) {
        const client = createLeaseClient({ backend: 'redis', urls: [redisUrl()] });
        const key = `obs:lease:${label}`;
        const lease = (await client.acquire(key, { holder: 'worker-3', ttlMs: 30_000 }))!;
        return {
          key,
          holder: lease.holder,
          token: lease.token,
          ttlMs: 30_000,
          kind: 'lock',
          async release() {
            await client.release(lease);
            await client.close();
          },
        };
      },
    },
    {
      name: 'redis: the npm redlock package (no fence)',
      source: config,
      async hold(label) {
        const redis = new Redis(redisUrl());
        const redlock = new Redlock([redis as never], { retryCount: 0 });
        const key = `obs:redlock:${label}`;
        const lock = await redlock.lock(key, 30_000);
        return {
          key,
          holder: String(lock.value),
          token: null,
          ttlMs: 30_000,
          kind: 'lock',
          async release() {
            await lock.unlock();
            redis.disconnect();
          },
        };
      },
    },
  ];
}

export function redlockQuorumLayout(urls: () => string[]): Layout {
  return {
    name: 'redis: a Redlock quorum of three instances (lib/lease)',
    source: () => ({ name: 'quorum', backend: 'redis', urls: urls(), mode: 'redlock', match: ['obs:*'], fenceSuffix: ':fence', keyspaceNotifications: 'off' }),
    async hold(label) {
      const client = createLeaseClient({ backend: 'redis', urls: urls() });
      const key = `obs:quorum:${label}`;
      const lease = (await client.acquire(key, { holder: 'worker-5', ttlMs: 30_000 }))!;
      return {
        key,
        holder: lease.holder,
        token: lease.token,
        ttlMs: 30_000,
        kind: 'lock',
        async release() {
          await client.release(lease);
          await client.close();
        },
      };
    },
  };
}

export function etcdLayouts(endpoint: () => string): Layout[] {
  const prefix = `obs${unique()}/`;
  // The etcd3 npm Election keeps its candidates under "election/<name>/<lease id in decimal>".
  const config = (): SourceConfig => ({ name: 'etcd', backend: 'etcd', endpoints: [endpoint()], prefixes: [prefix, `election/${prefix}`] });
  return [
    {
      name: 'etcd: lib/lease single key',
      source: config,
      async hold(label) {
        const client = createLeaseClient({ backend: 'etcd', endpoints: [endpoint()] });
        const key = `${prefix}lock/${label}`;
        const lease = (await client.acquire(key, { holder: 'worker-9', ttlMs: 30_000 }))!;
        return {
          key,
          holder: lease.holder,
          token: lease.token,
          ttlMs: 30_000,
          kind: 'lock',
          async release() {
            await client.release(lease);
            await client.close();
          },
        };
      },
    },
    {
      name: 'etcd: lib/lease elector with a queued candidate (hex lease ids)',
      source: config,
      async hold(label) {
        const key = `${prefix}election/${label}`;
        const stop = new AbortController();
        const clients = [0, 1].map(() => createLeaseClient({ backend: 'etcd', endpoints: [endpoint()] }));
        let leader: bigint | null = null;
        const first = createLeaderElector({ client: clients[0]!, key, holder: 'first', ttlMs: 6_000, renewEveryMs: 1_000, onStartedLeading: (_s, t) => void (leader = t) }).run(stop.signal);
        await until(() => leader !== null, 'the first candidate to lead');
        const second = createLeaderElector({ client: clients[1]!, key, holder: 'second', ttlMs: 6_000, renewEveryMs: 1_000, onStartedLeading: () => {} }).run(stop.signal);
        await sleep(500);
        return {
          key,
          holder: `first:${clients[0]!.instance}`,
          token: leader!,
          ttlMs: 6_000,
          kind: 'election',
          candidates: [`second:${clients[1]!.instance}`],
          async release() {
            stop.abort();
            await Promise.all([first, second]);
            await Promise.all(clients.map((c) => c.close()));
          },
        };
      },
    },
    {
      name: 'etcd: the etcd3 npm Election (decimal lease ids)',
      source: config,
      async hold(label) {
        const client = new Etcd3({ hosts: [endpoint()] });
        const name = `${prefix}npm-election/${label}`;
        const election = client.election(name, 30);
        const campaign = election.campaign('npm-candidate');
        await campaign.wait();
        return {
          key: `election/${name}`,
          holder: 'npm-candidate',
          token: 'any',
          ttlMs: null,
          kind: 'election',
          async release() {
            await campaign.resign();
            client.close();
          },
        };
      },
    },
    {
      name: 'etcd: etcdctl elect',
      source: config,
      async hold(label) {
        const name = `${prefix}etcdctl-election/${label}`;
        const process = etcdctl(endpoint(), ['elect', name, 'etcdctl-proposal']);
        await until(() => process.output().includes('etcdctl-proposal'), 'etcdctl elect to win');
        return { key: name, holder: 'etcdctl-proposal', token: 'any', ttlMs: 60_000, kind: 'election', release: () => process.stop() };
      },
    },
    {
      name: 'etcd: etcdctl lock (a mutex, with a waiter)',
      source: config,
      async hold(label) {
        const name = `${prefix}etcdctl-lock/${label}`;
        const first = etcdctl(endpoint(), ['lock', name]);
        await until(() => first.output().includes(name), 'etcdctl lock to acquire');
        const second = etcdctl(endpoint(), ['lock', name]);
        await sleep(500);
        return {
          key: name,
          holder: /^lease [0-9a-f]+$/,
          token: 'any',
          ttlMs: 60_000,
          kind: 'lock',
          candidates: [/^lease [0-9a-f]+$/],
          async release() {
            await second.stop();
            await first.stop();
          },
        };
      },
    },
  ];
}
