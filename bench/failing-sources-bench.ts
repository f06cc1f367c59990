// Benchmark (issue 13): what sources that all fail cost the server. Ten sources, every one
// failing in its own way on loopback, against a peer in the same run: the same ten sources
// pointed at the real test servers, with three leases each.
//
//   failing: redis   at a closed port, at a listener that accepts and never answers, at an HTTP/1 server
//            etcd    at a closed port, at a listener that never answers, at the test Redis (another protocol)
//            postgres at the test PostgreSQL with a table that does not exist, at a closed port,
//                     at a listener that never answers, at an HTTP/1 server
//   healthy: 3 Redis, 3 etcd and 4 PostgreSQL sources on the test servers, 3 leases each
//            (30 s TTL, renewed every 10 s by this process)
//
// Each case is a real server started as `npm start` does (scripts/start.ts, which builds first
// when the build is missing or stale) on a fresh store: a new PostgreSQL database on the test
// server (DATABASE_URL), or a new embedded PGlite directory. After a warm-up (requests on, and
// the failing sources' backoff settled), two windows:
//   - idle: no requests; CPU of the server's process tree (/proc/<pid>/stat utime+stime, with
//     reaped children's cutime+cstime) over the window, in % of one core; store transactions
//     (pg_stat_database xact_commit, PostgreSQL store) and read attempts (/metrics);
//   - load: GET /api/health/live and GET /api/v1/leases, each --rate times a second on a steady
//     schedule (node:http, keep-alive), timed from sending to the last byte: p50 / p99 / max;
//     CPU over that window as well.
// With --old-root, the failing case is also run on that checkout (another `git worktree` of
// older code, with its own node_modules and build): the "before" figures.
//
//   node --import tsx bench/failing-sources-bench.ts [--root DIR] [--old-root DIR] [--stores postgres,pglite]
//        [--warmup 30] [--seconds 60] [--rate 20] [--rounds 1] [--before-rounds 1] [--cases after-healthy,after-failing,before-failing] [--json FILE] [--write]
//
// Needs the test services (`bash scripts/services.sh up`). Every address it uses is on
// 127.0.0.0/8. With --write, replaces the failing-sources section of bench/RESULTS.md.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync, closeSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Etcd3, type Lease } from 'etcd3';
import Redis from 'ioredis';
import pg from 'pg';
import { createPostgresDatabase } from '../tests/support/databases';
import { ROOT, testServices } from '../tests/support/services';
import { gitHead, log, percentile, sleep, writeResultsSection } from './support';

const { values } = parseArgs({
  options: {
    root: { type: 'string', default: ROOT },
    'old-root': { type: 'string' },
    stores: { type: 'string', default: 'postgres,pglite' },
    warmup: { type: 'string', default: '30' },
    seconds: { type: 'string', default: '60' },
    rate: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '1' },
    /** The "before" cases run in this many of the rounds (the first ones): they take longest. */
    'before-rounds': { type: 'string', default: '1' },
    'healthy-before': { type: 'boolean', default: false },
    /** Which cases: any of after-healthy, after-failing, before-failing, before-healthy (default: all but before-healthy, which --healthy-before adds). */
    cases: { type: 'string' },
    write: { type: 'boolean', default: false },
    json: { type: 'string' },
    /** Render the report from a --json file of an earlier run instead of running (with the same options). */
    report: { type: 'string' },
  },
});
const WARMUP_S = Number(values.warmup);
const WINDOW_S = Number(values.seconds);
const RATE = Number(values.rate);
const ROUNDS = Number(values.rounds);
const STORES = values.stores.split(',') as ('postgres' | 'pglite')[];
const services = testServices();
const CLK_TCK = 100; // getconf CLK_TCK on Linux

// ------------------------------------------------------------------ loopback targets
/** Resolves whether something accepts connections at 127.0.0.1:port. */
const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.setTimeout(1_000, () => (socket.destroy(), resolve(true)));
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
async function closedPort(preferred: number): Promise<number> {
  for (let port = preferred; port < preferred + 50; port++) if (!(await listening(port))) return port;
  throw new Error(`no closed port near ${preferred}`);
}
const listen = (server: net.Server) =>
  new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));

type SourceConfig = Record<string, unknown> & { name: string };
let failingSources: SourceConfig[] = [];
let healthySources: SourceConfig[] = [];

/** Starts the loopback targets and writes the healthy peer's leases; returns what undoes it. */
async function setUp(): Promise<() => Promise<void>> {
  // Accepts every connection and never sends a byte (what a SIGSTOPped server or a black-holing
  // proxy looks like once the TCP handshake is done).
  const silentSockets = new Set<net.Socket>();
  const silent = net.createServer((socket) => {
    silentSockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => silentSockets.delete(socket));
  });
  // Speaks HTTP/1.1 to whoever connects: Redis, PostgreSQL and gRPC clients get an answer they cannot parse.
  const http1 = http.createServer((request, response) => response.end('not a lease store\n'));
  http1.on('clientError', (_error, socket) => socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n'));
  const silentPort = await listen(silent);
  const http1Port = await listen(http1);
  const redisClosed = await closedPort(16399);
  const etcdClosed = await closedPort(12399);
  const pgClosed = await closedPort(15499);
  const redisPort = Number(new URL(services.redisUrl).port);
  const pgAdmin = new URL(services.databaseUrl);
  log(`targets: silent listener :${silentPort}, HTTP/1 server :${http1Port}, closed :${redisClosed} :${etcdClosed} :${pgClosed}, test Redis :${redisPort}`);

  // ------------------------------------------------------------------ the healthy peer's leases
  const run = randomBytes(3).toString('hex');
  const sourceDb = await createPostgresDatabase('lh_fsbsrc');
  const sql = new pg.Client(sourceDb.url);
  await sql.connect();
  const LEASES_PER_SOURCE = 3;
  const TTL_MS = 30_000;
  for (let t = 1; t <= 4; t++) {
    await sql.query(`CREATE TABLE leases${t} (name VARCHAR(200) PRIMARY KEY, owner VARCHAR(200), expires_at TIMESTAMPTZ NOT NULL, token BIGINT NOT NULL DEFAULT 0)`);
    await sql.query(`INSERT INTO leases${t} SELECT 'job-' || i, 'worker-' || i, now() + interval '30 seconds', i FROM generate_series(1, ${LEASES_PER_SOURCE}) AS i`);
  }
  const redis = new Redis(services.redisUrl);
  const redisPrefix = (s: number) => `fsbench${run}:r${s}:`;
  for (let s = 1; s <= 3; s++) {
    for (let i = 1; i <= LEASES_PER_SOURCE; i++) {
      await redis.set(`${redisPrefix(s)}job-${i}`, `worker-${i}`, 'PX', TTL_MS);
      await redis.set(`${redisPrefix(s)}job-${i}:fence`, String(i));
    }
  }
  const etcd = new Etcd3({ hosts: services.etcdEndpoints });
  const etcdPrefix = (s: number) => `fsbench${run}/e${s}/`;
  const etcdLeases: Lease[] = [];
  for (let s = 1; s <= 3; s++) {
    for (let i = 1; i <= LEASES_PER_SOURCE; i++) {
      const lease = etcd.lease(TTL_MS / 1000); // the client keeps it alive every TTL/3 (10 s)
      lease.on('lost', () => {});
      await lease.put(`${etcdPrefix(s)}job-${i}`).value(`worker-${i}`);
      etcdLeases.push(lease);
    }
  }
  // Renewals every 10 s, as a holder renewing at a third of its TTL would.
  const renewer = setInterval(() => {
    void (async () => {
      for (let t = 1; t <= 4; t++) await sql.query(`UPDATE leases${t} SET expires_at = now() + interval '30 seconds'`).catch(() => {});
      for (let s = 1; s <= 3; s++) for (let i = 1; i <= LEASES_PER_SOURCE; i++) await redis.pexpire(`${redisPrefix(s)}job-${i}`, TTL_MS).catch(() => {});
    })();
  }, 10_000);

  const sourceUrl = new URL(sourceDb.url);
  const pgAt = (port: number) => `postgres://${pgAdmin.username}:${pgAdmin.password}@127.0.0.1:${port}/leasehold`;
  failingSources = [
    { name: 'redis-closed', backend: 'redis', urls: [`redis://127.0.0.1:${redisClosed}`], match: ['lock:*'] },
    { name: 'redis-silent', backend: 'redis', urls: [`redis://127.0.0.1:${silentPort}`], match: ['lock:*'] },
    { name: 'redis-http', backend: 'redis', urls: [`redis://127.0.0.1:${http1Port}`], match: ['lock:*'] },
    { name: 'etcd-closed', backend: 'etcd', endpoints: [`http://127.0.0.1:${etcdClosed}`], prefixes: ['election/'] },
    { name: 'etcd-silent', backend: 'etcd', endpoints: [`http://127.0.0.1:${silentPort}`], prefixes: ['election/'] },
    { name: 'etcd-redisport', backend: 'etcd', endpoints: [`http://127.0.0.1:${redisPort}`], prefixes: ['election/'] },
    { name: 'pg-missing-table', backend: 'postgres', url: sourceUrl.toString(), tables: [{ table: 'no_such_leases', format: 'leasehold' }] },
    { name: 'pg-closed', backend: 'postgres', url: pgAt(pgClosed), tables: [{ table: 'leases', format: 'leasehold' }] },
    { name: 'pg-silent', backend: 'postgres', url: pgAt(silentPort), tables: [{ table: 'leases', format: 'leasehold' }] },
    { name: 'pg-http', backend: 'postgres', url: pgAt(http1Port), tables: [{ table: 'leases', format: 'leasehold' }] },
  ];
  healthySources = [
    ...[1, 2, 3].map((s) => ({ name: `redis-${s}`, backend: 'redis', urls: [services.redisUrl], match: [`${redisPrefix(s)}*`] })),
    ...[1, 2, 3].map((s) => ({ name: `etcd-${s}`, backend: 'etcd', endpoints: services.etcdEndpoints, prefixes: [etcdPrefix(s)] })),
    ...[1, 2, 3, 4].map((t) => ({ name: `pg-${t}`, backend: 'postgres', url: sourceUrl.toString(), tables: [{ table: `leases${t}`, format: 'leasehold' }] })),
  ];

  return async () => {
    clearInterval(renewer);
    for (const lease of etcdLeases) await lease.revoke().catch(() => {});
    etcd.close();
    for (let s = 1; s <= 3; s++) {
      const keys = await redis.keys(`${redisPrefix(s)}*`);
      if (keys.length) await redis.del(...keys);
    }
    redis.disconnect();
    await sql.end();
    await sourceDb.drop();
    for (const socket of silentSockets) socket.destroy();
    silent.close();
    http1.close();
    http1.closeAllConnections();
    agent.destroy();
  };
}

// ------------------------------------------------------------------ the server's CPU
type Ticks = { tree: number; next: number; pids: number };
function treeTicks(root: number): Ticks {
  const stats = new Map<number, { ppid: number; ticks: number; comm: string }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const fields = stat.slice(close + 2).split(' '); // fields[0] is field 3 (state)
      const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]); // utime stime cutime cstime
      stats.set(Number(entry), { ppid: Number(fields[1]), ticks, comm: stat.slice(stat.indexOf('(') + 1, close) });
    } catch {
      // gone
    }
  }
  let tree = 0;
  let next = 0;
  let pids = 0;
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop()!;
    const s = stats.get(pid);
    if (!s) continue;
    pids++;
    tree += s.ticks;
    if (pid !== root) next += s.ticks;
    for (const [child, c] of stats) if (c.ppid === pid) stack.push(child);
  }
  return { tree, next, pids };
}

/** Busy and total CPU ticks of the whole machine, all cores (/proc/stat). */
function machineTicks(): { busy: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = fields.reduce((a, b) => a + b, 0);
  return { busy: total - fields[3]! - fields[4]!, total }; // minus idle and iowait
}

// ------------------------------------------------------------------ the client
const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
/** A request not answered within this of being sent (queueing in the agent included) is given up on and counted at this time. */
const DEADLINE_MS = 30_000;
function timedGet(port: number, pathname: string): Promise<{ ms: number; status: number; bytes: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    const settle = (status: number, bytes: number) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve({ ms: performance.now() - started, status, bytes });
    };
    const request = http.get({ host: '127.0.0.1', port, path: pathname, agent }, (response) => {
      let bytes = 0;
      response.on('data', (chunk: Buffer) => (bytes += chunk.length));
      response.on('end', () => settle(response.statusCode ?? 0, bytes));
      response.on('error', () => settle(0, bytes));
    });
    const deadline = setTimeout(() => {
      settle(-1, 0);
      request.destroy(new Error('deadline'));
    }, DEADLINE_MS);
    request.on('error', () => settle(0, 0));
  });
}

const ROUTES = ['/api/health/live', '/api/v1/leases'] as const;
type Timings = Record<(typeof ROUTES)[number], { ms: number[]; errors: number; timeouts: number; bytes: number }> & { samples: { route: string; atS: number; ms: number }[] };
/** Requests each route RATE times a second on a fixed schedule (open loop: a slow answer does not delay the next request). */
async function load(port: number, seconds: number): Promise<Timings> {
  const timings = { ...Object.fromEntries(ROUTES.map((r) => [r, { ms: [] as number[], errors: 0, timeouts: 0, bytes: 0 }])), samples: [] } as unknown as Timings;
  const period = 1000 / RATE;
  const start = performance.now();
  const inflight: Promise<void>[] = [];
  for (let tick = 0; ; tick++) {
    const at = start + tick * period;
    if (at - start >= seconds * 1000) break;
    const wait = at - performance.now();
    if (wait > 0) await sleep(wait);
    ROUTES.forEach((route, index) => {
      const fire = async () => {
        if (index) await sleep(period / 2); // the two routes interleaved, half a period apart
        const sentAt = performance.now();
        const result = await timedGet(port, route);
        const t = timings[route];
        timings.samples.push({ route, atS: Math.round(sentAt - start) / 1000, ms: Math.round(result.ms * 10) / 10 });
        if (result.status === 200) {
          t.ms.push(result.ms);
          t.bytes = result.bytes;
        } else if (result.status === -1) {
          t.ms.push(DEADLINE_MS); // counted in the percentiles at the deadline: at least this slow
          t.timeouts++;
        } else t.errors++;
      };
      inflight.push(fire());
    });
  }
  await Promise.all(inflight);
  return timings;
}

// ------------------------------------------------------------------ one case
type Store = 'postgres' | 'pglite';
type CaseResult = {
  label: string;
  code: 'after' | 'before';
  sources: 'failing' | 'healthy';
  store: Store;
  round: number;
  idleCpuPct: number;
  idleServerCpuPct: number;
  loadCpuPct: number;
  xactPerS: number | null;
  attemptsPerSourceMin: number | null;
  /** Failed reads per minute of each source, over the idle window. */
  attemptsBySourceMin: Record<string, number> | null;
  sourceStates: string;
  routes: Record<string, { n: number; p50: number; p99: number; max: number; errors: number; timeouts: number; bytes: number }>;
  /** Every request of the load window (seconds from its start, ms), and each second's CPU: the server's and the machine's (both in % of one core). */
  samples: { route: string; atS: number; ms: number }[];
  perSecond: { atS: number; serverPct: number; machinePct: number }[];
  leases: number;
  /** The machine's 1-minute load average during the case's windows: mean and highest of samples every 5 s. */
  load: { mean: number; max: number };
};

/** The body of a 200 answer, or null (another status, no answer within `timeoutMs`, a connection error). */
async function fetchText(port: number, pathname: string, timeoutMs: number): Promise<string | null> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}${pathname}`, { signal: AbortSignal.timeout(timeoutMs) });
    const text = await response.text();
    return response.ok ? text : null;
  } catch {
    return null;
  }
}
async function fetchJson(port: number, pathname: string): Promise<unknown> {
  const text = await fetchText(port, pathname, DEADLINE_MS);
  try {
    return text === null ? null : JSON.parse(text);
  } catch {
    return null;
  }
}

/** The metric's values by source (its `source` label), or null when /metrics does not answer. */
async function readMetric(port: number, name: string): Promise<Map<string, number> | null> {
  const text = (await fetchText(port, '/metrics', DEADLINE_MS)) ?? '';
  if (!text) return null;
  const bySource = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) {
      const source = /source="([^"]*)"/.exec(line)?.[1] ?? '';
      bySource.set(source, (bySource.get(source) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
    }
  }
  return bySource;
}
const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

async function xactCommit(dbName: string): Promise<number> {
  const admin = new pg.Client(services.databaseUrl);
  await admin.connect();
  try {
    const { rows } = await admin.query<{ n: string }>('SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = $1', [dbName]);
    return Number(rows[0]?.n ?? 0);
  } finally {
    await admin.end();
  }
}

let nextPort = 3291;
async function freePort(): Promise<number> {
  while (await listening(nextPort)) nextPort++;
  return nextPort++;
}

async function runCase(code: 'after' | 'before', sourcesKind: 'failing' | 'healthy', store: Store, round: number): Promise<CaseResult> {
  const root = code === 'after' ? values.root : values['old-root']!;
  const label = `${code} / ${sourcesKind} / ${store}`;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'leasehold-fsbench-'));
  const configFile = path.join(dir, 'leasehold.config.json');
  const sources = sourcesKind === 'failing' ? failingSources : healthySources;
  writeFileSync(configFile, JSON.stringify({ pollMs: 1000, sources }, null, 2));
  const env: Record<string, string | undefined> = {
    ...process.env,
    LEASEHOLD_ANONYMOUS_ROLE: 'viewer',
    PORT: '',
    HOST: '127.0.0.1',
    LEASEHOLD_CONFIG: configFile,
    LEASEHOLD_COLLECTOR: undefined,
    LEASEHOLD_DEMO: undefined,
    LEASEHOLD_ALLOWED_HOSTS: undefined,
    DATABASE_URL: undefined,
    LEASEHOLD_DATA_DIR: undefined,
    NODE_OPTIONS: undefined,
  };
  let storeDb: Awaited<ReturnType<typeof createPostgresDatabase>> | null = null;
  if (store === 'postgres') {
    storeDb = await createPostgresDatabase('lh_fsbench');
    env.DATABASE_URL = storeDb.url;
  } else {
    env.LEASEHOLD_DATA_DIR = path.join(dir, 'data');
  }
  const port = await freePort();
  env.PORT = String(port);
  const logFile = path.join(dir, 'server.log');
  const out = openSync(logFile, 'w');
  const server: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
    cwd: root,
    env: env as NodeJS.ProcessEnv,
    stdio: ['ignore', out, out],
    detached: true, // its own process group, so that nothing of it outlives the case
  });
  closeSync(out);
  const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
  const started = performance.now();
  try {
    // Up (start.ts builds first if it must), then every source read at least once.
    for (;;) {
      if (server.exitCode !== null) throw new Error(`the server exited (${server.exitCode}); see ${logFile}`);
      if (performance.now() - started > 900_000) throw new Error('the server did not answer within 15 minutes');
      const ok = (await fetchText(port, '/api/health', 5_000)) !== null;
      if (ok) break;
      await sleep(200);
    }
    const upS = (performance.now() - started) / 1000;
    const want = sourcesKind === 'failing' ? 'down' : 'up';
    for (;;) {
      const body = (await fetchJson(port, '/api/v1/sources')) as { sources?: { name: string; status: string }[] } | null;
      const states = body?.sources ?? [];
      if (states.filter((s) => s.status === want).length === sources.length) break;
      if (performance.now() - started > 300_000 + upS * 1000) throw new Error(`not every source ${want} after 5 minutes: ${JSON.stringify(states.map((s) => [s.name, s.status]))}`);
      await sleep(500);
    }
    log(`${label}: serving after ${upS.toFixed(1)} s, every source ${want} after ${((performance.now() - started) / 1000).toFixed(1)} s; warming up ${WARMUP_S} s`);
    await load(port, WARMUP_S);
    await sleep(2_000);

    const loadSamples: number[] = [];
    const sampler = setInterval(() => loadSamples.push(os.loadavg()[0]!), 5_000);
    // Idle window: the collector alone.
    const attempts0 = await readMetric(port, 'leasehold_read_failures_total');
    const xact0 = storeDb ? await xactCommit(new URL(storeDb.url).pathname.slice(1)) : null;
    const cpu0 = treeTicks(server.pid!);
    const idleStart = performance.now();
    await sleep(WINDOW_S * 1000);
    const cpu1 = treeTicks(server.pid!);
    const idleMs = performance.now() - idleStart;
    const xact1 = storeDb ? await xactCommit(new URL(storeDb.url).pathname.slice(1)) : null;
    const attempts1 = await readMetric(port, 'leasehold_read_failures_total');
    const idleCpuPct = ((cpu1.tree - cpu0.tree) / CLK_TCK / (idleMs / 1000)) * 100;
    const idleServerCpuPct = ((cpu1.next - cpu0.next) / CLK_TCK / (idleMs / 1000)) * 100;

    // Load window.
    const cpu2 = treeTicks(server.pid!);
    // Each second of the load window: the server's CPU and the whole machine's, to tell a slow
    // answer caused by the server from one caused by other work on the machine.
    const perSecond: { atS: number; serverPct: number; machinePct: number }[] = [];
    let previous = { server: cpu2.tree, machine: machineTicks(), at: performance.now() };
    const secondSampler = setInterval(() => {
      const now = { server: treeTicks(server.pid!).tree, machine: machineTicks(), at: performance.now() };
      const seconds = (now.at - previous.at) / 1000;
      perSecond.push({
        atS: Math.round(now.at - loadStartAt) / 1000,
        serverPct: Math.round(((now.server - previous.server) / CLK_TCK / seconds) * 1000) / 10,
        machinePct: Math.round(((now.machine.busy - previous.machine.busy) / CLK_TCK / seconds) * 1000) / 10,
      });
      previous = now;
    }, 1_000);
    const loadStartAt = performance.now();
    const loadStart = performance.now();
    const timings = await load(port, WINDOW_S);
    const cpu3 = treeTicks(server.pid!);
    const loadCpuPct = ((cpu3.tree - cpu2.tree) / CLK_TCK / ((performance.now() - loadStart) / 1000)) * 100;
    clearInterval(sampler);
    clearInterval(secondSampler);

    const body = (await fetchJson(port, '/api/v1/sources')) as { sources?: { name: string; status: string; lastError: string | null }[] } | null;
    const states = new Map<string, number>();
    for (const s of body?.sources ?? []) states.set(s.status, (states.get(s.status) ?? 0) + 1);
    const list = (await fetchJson(port, '/api/v1/leases')) as { total?: number } | null;
    {
      // The slowest 1 % of answers: when they came, and what the machine and the server were doing that second.
      const slow = [...timings.samples].sort((a, b) => b.ms - a.ms).slice(0, Math.ceil(timings.samples.length / 100));
      const during = (at: number) => perSecond.find((p) => p.atS >= at) ?? perSecond.at(-1);
      const others = (p: { serverPct: number; machinePct: number } | undefined) => (p ? Math.max(0, p.machinePct - p.serverPct) : NaN);
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
      log(
        `  slowest 1 %: ${slow.map((x) => `${x.ms.toFixed(0)} ms at ${x.atS.toFixed(1)} s`).join(', ')}; ` +
          `the rest of the machine's CPU (this client included) in those seconds ${mean(slow.map((x) => others(during(x.atS)))).toFixed(0)} % of a core (window mean ${mean(perSecond.map(others)).toFixed(0)} %), ` +
          `the server's ${mean(slow.map((x) => during(x.atS)?.serverPct ?? NaN)).toFixed(0)} % (window mean ${mean(perSecond.map((p) => p.serverPct)).toFixed(0)} %)`,
      );
    }
    if (sourcesKind === 'failing') {
      for (const s of body?.sources ?? []) log(`  ${s.name}: ${s.status}: ${s.lastError ?? ''}`.slice(0, 200));
      if (attempts0 && attempts1) log(`  failed reads per minute: ${sources.map((s) => `${s.name} ${Math.round((((attempts1.get(s.name) ?? 0) - (attempts0.get(s.name) ?? 0)) * 60_000) / idleMs)}`).join(', ')}`);
    }
    const routes: CaseResult['routes'] = {};
    for (const route of ROUTES) {
      const t = timings[route];
      routes[route] = { n: t.ms.length, p50: percentile(t.ms, 50), p99: percentile(t.ms, 99), max: Math.max(...t.ms), errors: t.errors, timeouts: t.timeouts, bytes: t.bytes };
    }
    const result: CaseResult = {
      label,
      code,
      sources: sourcesKind,
      store,
      round,
      idleCpuPct,
      idleServerCpuPct,
      loadCpuPct,
      xactPerS: xact0 !== null && xact1 !== null ? (xact1 - xact0) / (idleMs / 1000) : null,
      attemptsPerSourceMin: attempts0 !== null && attempts1 !== null && sourcesKind === 'failing' ? ((sum(attempts1) - sum(attempts0)) / sources.length) * (60_000 / idleMs) : null,
      attemptsBySourceMin:
        attempts0 && attempts1 && sourcesKind === 'failing'
          ? Object.fromEntries(sources.map((s) => [s.name, Math.round((((attempts1.get(s.name) ?? 0) - (attempts0.get(s.name) ?? 0)) * 60_000) / idleMs)]))
          : null,
      sourceStates: [...states].map(([s, n]) => `${n} ${s}`).join(', '),
      routes,
      samples: timings.samples,
      perSecond,
      leases: list?.total ?? 0,
      load: { mean: loadSamples.reduce((a, b) => a + b, 0) / Math.max(1, loadSamples.length), max: Math.max(...loadSamples) },
    };
    log(
      `${label}: idle CPU ${idleCpuPct.toFixed(2)} % (next ${idleServerCpuPct.toFixed(2)} %), under load ${loadCpuPct.toFixed(1)} %, ` +
        `${result.xactPerS === null ? '' : `store tx ${result.xactPerS.toFixed(2)}/s, `}` +
        `${result.attemptsPerSourceMin === null ? '' : `${result.attemptsPerSourceMin.toFixed(1)} failed reads/source/min, `}` +
        ROUTES.map((r) => `${r} p50 ${routes[r]!.p50.toFixed(1)} p99 ${routes[r]!.p99.toFixed(1)} max ${routes[r]!.max.toFixed(0)} ms (${routes[r]!.n}, ${routes[r]!.errors} errors, ${routes[r]!.timeouts} not answered within ${DEADLINE_MS / 1000} s)`).join(', ') +
        `; ${result.sourceStates}; ${result.leases} leases; load during the windows ${result.load.mean.toFixed(2)} (max ${result.load.max.toFixed(2)})`,
    );
    return result;
  } finally {
    try {
      process.kill(-server.pid!, 'SIGTERM');
    } catch {
      // gone
    }
    const timeout = sleep(30_000).then(() => 'timeout');
    if ((await Promise.race([exited, timeout])) === 'timeout') {
      try {
        process.kill(-server.pid!, 'SIGKILL');
      } catch {
        // gone
      }
      await exited;
    }
    await sleep(500);
    await storeDb?.drop().catch((error: unknown) => log(`could not drop the store database: ${(error as Error).message}`));
    rmSync(dir, { recursive: true, force: true });
  }
}

// ------------------------------------------------------------------ the runs
type Saved = { startedAt: string; loadBefore: number[]; loadAfter: number[]; results: CaseResult[] };
let saved: Saved;
if (values.report) {
  saved = JSON.parse(readFileSync(values.report, 'utf8')) as Saved;
} else {
  const tearDown = await setUp();
  const results: CaseResult[] = [];
  const loadBefore = os.loadavg();
  const startedAt = new Date().toISOString();
  const wanted = new Set(
    (values.cases ?? ['after-healthy', 'after-failing', ...(values['old-root'] ? ['before-failing'] : []), ...(values['healthy-before'] ? ['before-healthy'] : [])].join(',')).split(','),
  );
  for (let round = 1; round <= ROUNDS; round++) {
    for (const store of STORES) {
      // Healthy first in odd rounds, failing first in even ones: neither always follows the other.
      const afterOrder = round % 2 === 1 ? (['healthy', 'failing'] as const) : (['failing', 'healthy'] as const);
      for (const kind of afterOrder) if (wanted.has(`after-${kind}`)) results.push(await runCase('after', kind, store, round));
      if (round <= Number(values['before-rounds'])) {
        for (const kind of ['failing', 'healthy'] as const) if (wanted.has(`before-${kind}`)) results.push(await runCase('before', kind, store, round));
      }
      // What is measured so far, in case a later case fails.
      if (values.json) writeFileSync(values.json, JSON.stringify({ startedAt, loadBefore, loadAfter: os.loadavg(), results }, null, 2));
    }
  }
  saved = { startedAt, loadBefore, loadAfter: os.loadavg(), results };
  await tearDown();
  if (values.json) writeFileSync(values.json, JSON.stringify(saved, null, 2));
}
const { results, loadBefore, loadAfter } = saved;

// ------------------------------------------------------------------ the report
const median = (xs: number[]) => percentile(xs, 50);
const f1 = (x: number) => (Number.isNaN(x) ? '—' : x.toFixed(1));
const f2 = (x: number) => (Number.isNaN(x) ? '—' : x.toFixed(2));
const pick = (code: string, sources: string, store: string) => results.filter((r) => r.code === code && r.sources === sources && r.store === store);
const lines = [
  `Measured ${saved.startedAt.slice(0, 10)} on ${os.cpus()[0]?.model.trim()} (${os.cpus().length} cores), Node ${process.version}; ` +
    `load average ${loadBefore.map((l) => l.toFixed(2)).join(' / ')} at the start, ${loadAfter.map((l) => l.toFixed(2)).join(' / ')} at the end; ` +
    `${ROUNDS} round(s); per case ${WARMUP_S} s warm-up, ${WINDOW_S} s idle window, ${WINDOW_S} s with ${RATE} requests/s to each route. ` +
    `"after": ${values.root} at ${gitHead(values.root)}${values['old-root'] ? `; "before": ${values['old-root']} at ${gitHead(values['old-root'])}` : ''}.`,
  '',
  '| code | sources | store | CPU idle (% of a core) | CPU under requests | store tx/s (idle) | failed reads per source per minute | `/api/health/live` p50 / p99 / max | `/api/v1/leases` p50 / p99 / max | sources | load avg (mean / max) |',
  '|---|---|---|---:|---:|---:|---:|---|---|---|---|',
];
for (const r of results) {
  const route = (name: string) => `${f1(r.routes[name]!.p50)} / ${f1(r.routes[name]!.p99)} / ${Math.round(r.routes[name]!.max)} ms${r.routes[name]!.errors ? ` (${r.routes[name]!.errors} errors)` : ''}${r.routes[name]!.timeouts ? ` (${r.routes[name]!.timeouts} of ${r.routes[name]!.n} unanswered after ${DEADLINE_MS / 1000} s, counted as ${DEADLINE_MS / 1000} s)` : ''}`;
  lines.push(
    `| ${r.code} | ${r.sources} | ${r.store}${ROUNDS > 1 ? ` (${r.round})` : ''} | ${f2(r.idleCpuPct)} % | ${f1(r.loadCpuPct)} % | ${r.xactPerS === null ? '—' : f2(r.xactPerS)} | ${r.attemptsPerSourceMin === null ? '—' : f1(r.attemptsPerSourceMin)} | ${route('/api/health/live')} | ${route('/api/v1/leases')} | ${r.sourceStates || '/api/v1/sources did not answer'}, ${r.leases} leases | ${f2(r.load.mean)} / ${f2(r.load.max)} |`,
  );
}
lines.push(
  '',
  '| store | `/api/health/live` p99: failing / healthy | `/api/v1/leases` p99: failing / healthy | CPU idle, every source failing: after | before |',
  '|---|---:|---:|---:|---:|',
);
for (const store of STORES) {
  const p99 = (sources: string, route: string) => median(pick('after', sources, store).map((r) => r.routes[route]!.p99));
  const ratio = (route: string) => `${f2(p99('failing', route) / p99('healthy', route))} (${f1(p99('failing', route))} / ${f1(p99('healthy', route))} ms)`;
  const cpu = (code: string) => median(pick(code, 'failing', store).map((r) => r.idleCpuPct));
  lines.push(`| ${store} | ${ratio('/api/health/live')} | ${ratio('/api/v1/leases')} | ${f2(cpu('after'))} % | ${values['old-root'] ? `${f2(cpu('before'))} %` : '—'} |`);
}
if (ROUNDS > 1) lines.push('', `Ratios and CPU: medians over the rounds.`);
const output = lines.join('\n');
console.log(output);


if (values.write) writeResultsSection({ id: 'failing-sources-bench', title: 'Failing sources (issue 13)', command: 'node --import tsx bench/failing-sources-bench.ts --old-root DIR --write', report: output });
process.exit(0);
