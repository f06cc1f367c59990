// One of Pixly's servers in the full-stack demo (scripts/demo.ts), a process of its own on
// real backends. For each backend it was given, it holds one kind of lease:
//   postgres  the weekly digest (lib/demo/server.ts: the scheduler elected on pixly.leases,
//             fenced writes, the workers, a membership lease), and the digest's cleanup job
//             guarded ShedLock-style (pixly.shedlock: whoever's cron fires first runs it);
//   redis     the thumbnail sweeper, a leader elected on a Redis lock (SET NX PX, fence counter);
//   etcd      the report builder, an etcd election (every server a candidate, in a queue);
//   zookeeper the search indexer, a leader elected as Apache Curator's LeaderLatch elects one
//             (lib/demo/zookeeper-leader.ts); only when asked for (`--backends ...,zookeeper`).
// Its faults are real: the demo pauses it with SIGSTOP and kills it with SIGKILL. It tells
// the demo over IPC which roles it leads, so the demo can pause a leader.
import pg from 'pg';
import { createFencedStore, createLeaderElector, createLeaseClient, type LeaseClient } from '../lease';
import { Gate } from './gate';
import { runZookeeperLeader } from './zookeeper-leader';
import { runDigestServer, wait } from './server';
import { tryLock, unlock } from './shedlock';
import { poolSql } from './sql';

export type StackBackend = 'postgres' | 'redis' | 'etcd' | 'zookeeper';
export const STACK_BACKENDS: readonly StackBackend[] = ['postgres', 'redis', 'etcd', 'zookeeper'];
/** What the demo runs on when not told: the three backends it has always run on; ZooKeeper is asked for by name. */
export const DEFAULT_STACK_BACKENDS: readonly StackBackend[] = ['postgres', 'redis', 'etcd'];

export const REDIS_LOCK_KEY = 'pixly:thumbnail-sweeper';
export const ETCD_ELECTION = 'pixly/report-builder';
export const SHEDLOCK_JOB = 'digest-cleanup';
export const ZOOKEEPER_ROOT = '/pixly';
export const ZOOKEEPER_ELECTION = `${ZOOKEEPER_ROOT}/search-indexer`;

export type StackServerOptions = {
  name: string;
  backends: readonly StackBackend[];
  pgUrl: string;
  redisUrl: string;
  etcdEndpoints: string[];
  /** ZooKeeper's connect string (host:port,...). */
  zookeeper: string;
  faults: boolean;
  log: (line: string) => void;
  /** Told when this server starts or stops leading a role. */
  onLeading: (role: StackBackend, leading: boolean) => void;
};

export type StackServer = { stop(): Promise<void> };

/** What the roles of one server share: its options, its life, and what stop() waits for and closes. */
type StackRun = {
  options: StackServerOptions;
  signal: AbortSignal;
  /** What runs until the server stops: awaited before the connections close, so that leases are resigned and released first. */
  running: Promise<unknown>[];
  closers: (() => Promise<unknown>)[];
  onError: (error: unknown) => void;
};

export function runStackServer(options: StackServerOptions): StackServer {
  const { log } = options;
  const stopping = new AbortController();
  const signal = stopping.signal;
  const run: StackRun = {
    options,
    signal,
    running: [],
    closers: [],
    onError: (error: unknown) => {
      if (!signal.aborted) log(`${(error as Error)?.message ?? String(error)}`);
    },
  };

  if (options.backends.includes('postgres')) runDigestRoles(run);
  if (options.backends.includes('redis')) {
    const client = createLeaseClient({ backend: 'redis', urls: [options.redisUrl] });
    elect(run, 'redis', client, REDIS_LOCK_KEY);
    run.closers.push(() => client.close());
  }
  if (options.backends.includes('etcd')) {
    const client = createLeaseClient({ backend: 'etcd', endpoints: options.etcdEndpoints });
    elect(run, 'etcd', client, ETCD_ELECTION);
    run.closers.push(() => client.close());
  }
  if (options.backends.includes('zookeeper')) electOnZookeeper(run);

  return {
    async stop() {
      stopping.abort();
      // The electors resign and the leases are released (a leader's work may take up to its
      // renew deadline to notice); a server that cannot finish in 6 s is closed anyway.
      await Promise.race([Promise.allSettled(run.running), wait(6_000)]);
      await Promise.allSettled(run.closers.map((close) => close()));
    },
  };
}

/** A leader elected on `key` that holds its role until it loses it or the server stops. */
function elect(run: StackRun, role: StackBackend, client: LeaseClient, key: string) {
  const { options, signal, onError } = run;
  const { name, log } = options;
  const elector = createLeaderElector({
    client,
    key,
    holder: name,
    ttlMs: 6_000,
    renewEveryMs: 1_500,
    renewDeadlineMs: 4_000,
    onStartedLeading: async (leading, token) => {
      log(`leads ${key} (${role}) with token ${token}`);
      options.onLeading(role, true);
      await wait(2 ** 31 - 1, AbortSignal.any([leading, signal]));
    },
    onStoppedLeading: () => options.onLeading(role, false),
    onError,
  });
  run.running.push(elector.run(signal).catch(onError));
}

/** The search indexer's leader, elected on ZooKeeper; a 4 s session, so a 9 s pause loses it. */
function electOnZookeeper(run: StackRun) {
  const { options, signal, onError } = run;
  const leader = runZookeeperLeader(
    {
      connect: options.zookeeper,
      path: ZOOKEEPER_ELECTION,
      id: options.name,
      sessionTimeoutMs: 4_000,
      onStartedLeading: async (leading, token) => {
        options.log(`leads ${ZOOKEEPER_ELECTION} (zookeeper) with czxid ${token}`);
        options.onLeading('zookeeper', true);
        await wait(2 ** 31 - 1, leading);
      },
      onStoppedLeading: () => options.onLeading('zookeeper', false),
      onError,
    },
    signal,
  );
  run.running.push(leader.catch(onError));
}

/** The postgres roles: the weekly digest (scheduler, workers, membership) and its cleanup cron. */
function runDigestRoles(run: StackRun) {
  const { options, signal, onError } = run;
  const { name, log } = options;
  // Two connections each: 18 servers take 36, the most the demo starts (40) take 80, which with
  // the console's own (about 13: store, writer, the source) stays inside PostgreSQL's default
  // of 100 (97 for ordinary roles). The lease renewals share them with the digest's work.
  const pool = new pg.Pool({ connectionString: options.pgUrl, max: 2, application_name: `pixly ${name}` });
  pool.on('error', onError); // a connection the server dropped: the pool opens another
  const db = poolSql(pool);
  const client = createLeaseClient({ backend: 'postgres', pool, table: 'pixly.leases', ensureTable: false });
  const fenced = createFencedStore({ pool, table: 'pixly.digest_fence' });
  const digest = runDigestServer({
    name,
    gate: new Gate(name), // never closed: the pauses and crashes here are real signals
    client,
    fenced,
    db,
    signal,
    faults: () => options.faults,
    log,
    onLeading: (leading) => options.onLeading('postgres', leading),
  });
  run.running.push(digest.done, cleanupCron(run, db).catch(onError));
  run.closers.push(() => fenced.close(), () => client.close(), () => pool.end());
}

/** The digest's cleanup, on every server's cron every 4-6 s; ShedLock lets one run it. */
async function cleanupCron(run: StackRun, db: ReturnType<typeof poolSql>) {
  const { signal, onError } = run;
  const { name } = run.options;
  while (!signal.aborted) {
    await wait(4_000 + Math.random() * 2_000, signal);
    if (signal.aborted) return;
    try {
      if (!(await tryLock(db, SHEDLOCK_JOB, name, 10_000))) continue;
      // The cleanup itself: the fenced store's log of accepted writes, older than an hour.
      await db.query("DELETE FROM pixly.digest_fence_log WHERE at < now() - interval '1 hour'").catch(() => {});
      await wait(1_000 + Math.random() * 1_000, signal);
      await unlock(db, SHEDLOCK_JOB, name, 3_000);
    } catch (error) {
      onError(error);
    }
  }
}
