// `npm run demo -- --backends postgres,redis,etcd[,zookeeper]`: the weekly-digest fleet on real backends.
//
// Starts PostgreSQL, Redis, etcd, ZooKeeper and Alertmanager with scripts/services.sh (or reuses them), makes fresh
// databases for the demo (leasehold_demo_store: Leasehold's store; leasehold_demo_pixly: the
// digest's tables, its lease table and a ShedLock table), serves the console observing all of
// it, and runs the fleet as separate OS processes (scripts/demo-server.ts). Faults are real:
// a leader is paused with SIGSTOP for longer than its lease and resumed with SIGCONT, a server
// is killed with SIGKILL and started again. Ctrl-C stops the fleet and the console; the
// services keep running (`npm run services -- down` stops them).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Etcd3 } from 'etcd3';
import { Redis } from 'ioredis';
import pg from 'pg';
import { setUp } from '../lib/demo/digest';
import { SHEDLOCK_SCHEMA, SHEDLOCK_TABLE } from '../lib/demo/shedlock';
import { DEFAULT_STACK_BACKENDS, ETCD_ELECTION, REDIS_LOCK_KEY, STACK_BACKENDS, ZOOKEEPER_ROOT, type StackBackend } from '../lib/demo/stack-server';
import { poolSql } from '../lib/demo/sql';
import { createFencedStore } from '../lib/lease';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const USAGE = 'usage: npm run demo -- [--backends postgres,redis,etcd,zookeeper] [--servers 18] [--users 3000] [--port 3000] [--faults on|off] [--seconds N]';
const PAUSE_EVERY_MS = 10_000;
const PAUSE_MS = 9_000; // longer than the 6 s leases and the 4 s ZooKeeper sessions: the paused leader loses its role
const CRASH_FIRST_MS = 30_000;

type Options = { backends: StackBackend[]; servers: number; users: number; port: number; faults: boolean; seconds: number | null };

function fail(message: string): never {
  console.error(`demo: ${message}`);
  process.exit(2);
}

function parseOptions(argv: string[]): Options {
  const options: Options = { backends: [...DEFAULT_STACK_BACKENDS], servers: 18, users: 3_000, port: Number(process.env.PORT ?? 3000), faults: true, seconds: null };
  const count = (flag: string, value: string | undefined, min: number, max: number) => {
    const n = Number(value);
    if (!value || !Number.isInteger(n) || n < min || n > max) fail(`${flag} takes a whole number from ${min} to ${max}; got ${JSON.stringify(value ?? '')}\n${USAGE}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.split(/=(.*)/s, 2) as [string, string | undefined];
    const value = () => inline ?? argv[++i];
    switch (flag) {
      case '--backends': {
        const list = (value() ?? '').split(',').map((b) => b.trim()).filter(Boolean);
        const unknown = list.filter((b) => !(STACK_BACKENDS as readonly string[]).includes(b));
        if (list.length === 0 || unknown.length) fail(`--backends takes a comma-separated list of ${STACK_BACKENDS.join(', ')}; ${unknown.length ? `unknown: ${unknown.join(', ')}` : 'got none'}\n${USAGE}`);
        options.backends = [...new Set(list)] as StackBackend[];
        break;
      }
      case '--servers':
        options.servers = count(flag, value(), 2, 40); // two PostgreSQL connections each: see lib/demo/stack-server.ts
        break;
      case '--users':
        options.users = count(flag, value(), 1, 1_000_000);
        break;
      case '--port':
        options.port = count(flag, value(), 1, 65_535);
        break;
      case '--seconds':
        options.seconds = count(flag, value(), 1, 86_400);
        break;
      case '--faults': {
        const v = value();
        if (v !== 'on' && v !== 'off') fail(`--faults takes on or off; got ${JSON.stringify(v ?? '')}\n${USAGE}`);
        options.faults = v === 'on';
        break;
      }
      case '--help':
      case '-h':
        console.log(USAGE);
        return process.exit(0);
      default:
        fail(`unknown option ${JSON.stringify(argv[i])}\n${USAGE}`);
    }
  }
  return options;
}

/** The services' addresses, as scripts/services.sh wrote them. */
function servicesEnv(): { databaseUrl: string; redisUrl: string; etcdEndpoints: string[]; zookeeper: string } {
  const file = path.join(process.env.LEASEHOLD_SERVICES_DIR ?? path.join(root, '.leasehold', 'services'), 'env');
  const values: Record<string, string> = {};
  for (const line of existsSync(file) ? readFileSync(file, 'utf8').split('\n') : []) {
    const eq = line.indexOf('=');
    if (eq > 0) values[line.slice(0, eq)] = line.slice(eq + 1);
  }
  const databaseUrl = values.LEASEHOLD_TEST_DATABASE_URL;
  if (!databaseUrl) fail(`scripts/services.sh did not write the services' addresses to ${file}`);
  return {
    databaseUrl,
    redisUrl: values.LEASEHOLD_TEST_REDIS_URL ?? 'redis://127.0.0.1:16379',
    etcdEndpoints: (values.LEASEHOLD_TEST_ETCD_ENDPOINTS ?? '').split(',').filter(Boolean),
    zookeeper: values.LEASEHOLD_TEST_ZOOKEEPER ?? '127.0.0.1:12181',
  };
}

/** A fresh database named `name` on the services' PostgreSQL (an old one is dropped). */
async function freshDatabase(adminUrl: string, name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** The digest's tables, the lease table, the fenced store's and ShedLock's, before any server starts. */
async function prepareApplication(url: string, users: number) {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  try {
    await setUp(poolSql(pool), users);
    await pool.query(SHEDLOCK_SCHEMA);
    const fenced = createFencedStore({ pool, table: 'pixly.digest_fence' });
    await fenced.highestToken('weekly-digest'); // creates its tables
    await fenced.close();
  } finally {
    await pool.end();
  }
}

/** Leases a demo killed earlier may have left in Redis and etcd. */
async function clearOldLeases(backends: StackBackend[], services: ReturnType<typeof servicesEnv>) {
  if (backends.includes('redis')) {
    const redis = new Redis(services.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await redis.connect();
    const keys = await redis.keys(`${REDIS_LOCK_KEY}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  }
  if (backends.includes('etcd')) {
    const etcd = new Etcd3({ hosts: services.etcdEndpoints });
    await etcd.delete().prefix(`${ETCD_ELECTION}/`);
    etcd.close();
  }
}

async function waitForHealth(url: string, console_: ChildProcess, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (console_.exitCode !== null) fail(`the console exited (code ${console_.exitCode}) before it answered; see its output above`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  fail(`the console did not answer ${url} within ${timeoutMs / 1000} s`);
}

const options = parseOptions(process.argv.slice(2));
const say = (line: string) => console.log(`demo: ${line}`);

say(`starting the services (scripts/services.sh up)`);
const up = spawnSync('bash', [path.join(root, 'scripts', 'services.sh'), 'up', '--no-chromium'], { cwd: root, stdio: 'inherit' });
if (up.status !== 0) fail(`scripts/services.sh up failed (exit ${up.status ?? up.signal}); see its output above`);
const services = servicesEnv();

const storeUrl = await freshDatabase(services.databaseUrl, 'leasehold_demo_store');
const pixlyUrl = await freshDatabase(services.databaseUrl, 'leasehold_demo_pixly');
await prepareApplication(pixlyUrl, options.users);
await clearOldLeases(options.backends, services);

const sources: unknown[] = [];
if (options.backends.includes('postgres')) {
  sources.push({
    name: 'pixly-postgres',
    backend: 'postgres',
    url: pixlyUrl,
    tables: [
      { table: 'pixly.leases', format: 'leasehold' },
      { table: SHEDLOCK_TABLE, format: 'shedlock' },
    ],
  });
}
if (options.backends.includes('redis')) sources.push({ name: 'pixly-redis', backend: 'redis', urls: [services.redisUrl], match: ['pixly:*'] });
if (options.backends.includes('etcd')) sources.push({ name: 'pixly-etcd', backend: 'etcd', endpoints: services.etcdEndpoints, prefixes: ['pixly/'] });
if (options.backends.includes('zookeeper')) sources.push({ name: 'pixly-zookeeper', backend: 'zookeeper', connect: services.zookeeper, paths: [ZOOKEEPER_ROOT] });
const demoDir = path.join(root, '.leasehold', 'demo');
mkdirSync(demoDir, { recursive: true });
const configFile = path.join(demoDir, 'leasehold.config.json');
writeFileSync(configFile, `${JSON.stringify({ pollMs: 1000, sources }, null, 2)}\n`);

// ------------------------------------------------------------------ the console
type Member = { name: string; child: ChildProcess; paused: boolean; killed: boolean };
const fleet = new Map<string, Member>();
const leaders = new Map<StackBackend, string>();
let stopping = false;
const timers = new Set<NodeJS.Timeout>();
const consoleUrl = `http://127.0.0.1:${options.port}`;
// Anything listening there (an old console would answer the health check in this one's place).
const portTaken = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const done = (taken: boolean) => {
      socket.destroy();
      resolve(taken);
    };
    socket.setTimeout(2_000, () => done(true)); // accepted, or at least not refused
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
if (await portTaken(options.port)) fail(`port ${options.port} is in use (another Leasehold?); stop it or choose another with --port`);
say(`starting the console on ${consoleUrl} (store: PostgreSQL database leasehold_demo_store; config: ${path.relative(root, configFile)})`);
// In its own process group, so that whatever it started (a build, `next start`) can be ended
// with it; the demo itself forwards Ctrl-C to it, in order, once the fleet has stopped.
const consoleProcess = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'scripts', 'start.ts')], {
  cwd: root,
  stdio: 'inherit',
  detached: true,
  env: { ...process.env, LEASEHOLD_ANONYMOUS_ROLE: 'viewer', PORT: String(options.port), HOST: '127.0.0.1', DATABASE_URL: storeUrl, LEASEHOLD_CONFIG: configFile, LEASEHOLD_DEMO: 'off' },
});
/** Signals the console's whole process group (scripts/start.ts, and its build or `next start`). */
const signalConsole = (signal: NodeJS.Signals) => {
  try {
    process.kill(-consoleProcess.pid!, signal);
  } catch {
    // the group has gone
  }
};
// From here on nothing may outlive the demo: whatever ends it (an error, a signal, a failed
// start), every child is continued and killed on the way out.
process.on('exit', () => {
  for (const member of fleet.values()) {
    member.child.kill('SIGCONT');
    member.child.kill('SIGKILL');
  }
  if (consoleProcess.exitCode === null && consoleProcess.signalCode === null) signalConsole('SIGTERM');
});
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));
consoleProcess.on('exit', (code) => {
  if (!stopping) {
    say(`the console exited (code ${code}); stopping the fleet`);
    void stop(1);
  }
});
await waitForHealth(`${consoleUrl}/api/health/live`, consoleProcess, 240_000);

// ------------------------------------------------------------------ the fleet

function startServer(name: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'scripts', 'demo-server.ts')], {
    cwd: root,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: {
      ...process.env,
      LEASEHOLD_DEMO_SERVER: name,
      LEASEHOLD_DEMO_BACKENDS: options.backends.join(','),
      LEASEHOLD_DEMO_PG_URL: pixlyUrl,
      LEASEHOLD_DEMO_REDIS_URL: services.redisUrl,
      LEASEHOLD_DEMO_ETCD_ENDPOINTS: services.etcdEndpoints.join(','),
      LEASEHOLD_DEMO_ZOOKEEPER: services.zookeeper,
      LEASEHOLD_DEMO_FAULTS: options.faults ? 'on' : 'off',
    },
  });
  const member: Member = { name, child, paused: false, killed: false };
  fleet.set(name, member);
  child.on('message', (message: { type?: string; role?: StackBackend; leading?: boolean }) => {
    if (message?.type !== 'leading' || !message.role) return;
    if (message.leading) leaders.set(message.role, name);
    else if (leaders.get(message.role) === name) leaders.delete(message.role);
  });
  child.on('exit', (code, signal) => {
    for (const [role, leader] of leaders) if (leader === name) leaders.delete(role);
    if (fleet.get(name) === member) fleet.delete(name);
    if (!member.killed && !stopping) say(`${name} exited (${signal ?? `code ${code}`})`);
  });
}

const names = Array.from({ length: options.servers }, (_, i) => `server-${String(i + 1).padStart(2, '0')}`);
for (const name of names) {
  if (stopping) break; // Ctrl-C while the fleet starts: no more servers
  startServer(name);
  await new Promise((resolve) => setTimeout(resolve, 300));
}
if (!stopping) say(`${options.servers} servers run on ${options.backends.join(', ')}; faults ${options.faults ? 'on' : 'off'}. Open ${consoleUrl}. Ctrl-C stops the fleet and the console.`);

// ------------------------------------------------------------------ faults
const later = (ms: number, work: () => void) => {
  const timer = setTimeout(() => {
    timers.delete(timer);
    if (!stopping) work();
  }, ms);
  timers.add(timer);
};
let nextRole = 0;
function pauseALeader() {
  // The roles in turn, so that every backend sees its leader stall.
  for (let tried = 0; tried < options.backends.length; tried++) {
    const role = options.backends[nextRole++ % options.backends.length]!;
    const member = fleet.get(leaders.get(role) ?? '');
    if (!member || member.paused) continue;
    member.paused = true;
    member.child.kill('SIGSTOP');
    say(`${member.name} paused with SIGSTOP for ${PAUSE_MS / 1000} s while leading ${role} (its ${role === 'zookeeper' ? 'session is 4 s' : 'lease is 6 s'})`);
    later(PAUSE_MS, () => {
      member.paused = false;
      member.child.kill('SIGCONT');
      say(`${member.name} resumed with SIGCONT`);
    });
    return;
  }
}
function crashAServer() {
  const candidates = [...fleet.values()].filter((m) => !m.paused);
  const member = candidates[Math.floor(Math.random() * candidates.length)];
  if (member) {
    member.killed = true;
    member.child.kill('SIGKILL');
    const downMs = 8_000 + Math.round(Math.random() * 6_000);
    say(`${member.name} killed with SIGKILL (nothing released); restarts in ${Math.round(downMs / 1000)} s`);
    later(downMs, () => {
      startServer(member.name);
      say(`${member.name} restarted`);
    });
  }
  later(25_000 + Math.random() * 10_000, crashAServer);
}
if (options.faults && !stopping) {
  const pauses = setInterval(() => !stopping && pauseALeader(), PAUSE_EVERY_MS);
  timers.add(pauses as unknown as NodeJS.Timeout);
  later(CRASH_FIRST_MS, crashAServer);
}

// ------------------------------------------------------------------ stopping
async function stop(code: number) {
  if (stopping) return;
  stopping = true;
  for (const timer of timers) clearInterval(timer); // clears timeouts too
  say('stopping the fleet and the console');
  const exited = (child: ChildProcess) => new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
  const members = [...fleet.values()];
  for (const member of members) {
    if (member.paused) member.child.kill('SIGCONT');
    member.child.kill('SIGTERM');
  }
  const grace = setTimeout(() => members.forEach((m) => m.child.kill('SIGKILL')), 8_000); // a server takes up to 6 s to resign and release
  await Promise.all(members.map((m) => exited(m.child)));
  clearTimeout(grace);
  consoleProcess.kill('SIGTERM'); // start.ts passes it on to `next start`, which closes the store
  const consoleGrace = setTimeout(() => signalConsole('SIGKILL'), 15_000);
  await exited(consoleProcess);
  clearTimeout(consoleGrace);
  say('stopped; the services keep running (npm run services -- down stops them)');
  process.exit(code);
}
if (options.seconds !== null) setTimeout(() => void stop(0), options.seconds * 1000);
