// Benchmark: one force-expire end to end (issue 16), per backend: a Postgres lease table, Redis
// in lib/lease's layout (SET NX PX + fence counter) and an etcd single key.
//   - ours: POST /api/v1/leases/{id}/force-expire over HTTP to `npm start`'s server
//     (scripts/start.ts, `next start`) with an operator's bearer token, on a fresh PostgreSQL
//     store, its collector watching the three sources. Each iteration takes a new grant with
//     lib/lease, waits until the server's store shows that holder and token (GET the lease),
//     then times the POST alone: auth, the `requested` audit entry, the compare-and-set, the
//     `done` entry and the history event, and the HTTP round trip;
//   - the peer, in the same run and interleaved iteration by iteration: the bare compare-and-set
//     (forceActionsFor(source).execute) in this process, on the same backend, on a fresh grant.
// The ratio is what Leasehold's guards cost on top of the backend's own atomic step. Every
// action's tokens are checked (Postgres, Redis: new = previous + 1; etcd: new > previous);
// a failure is counted, left out of the times, and makes the exit code 1.
//
//   node --import tsx bench/admin-bench.ts [--n 200] [--warmup 5] [--port 3198] [--write] [--stale-build]
//
// Needs a build (`npm run build`) and the test services (`bash scripts/services.sh up`). A build
// older than the source is refused, never rebuilt (scripts/start.ts would rebuild it); with
// --stale-build it is served anyway by `next start` as scripts/start.ts starts it, minus its
// build step, and the report says so (the peer then runs the newer source: a check, not a
// result). With --write, fills its section of bench/RESULTS.md.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Etcd3 } from 'etcd3';
import Redis from 'ioredis';
import pg from 'pg';
import { createToken } from '../lib/auth/tokens';
import type { SourceConfig } from '../lib/config';
import { openStore } from '../lib/db/store';
import type { LeaseView } from '../lib/domain/types';
import { createLeaseClient, type Lease, type LeaseClient } from '../lib/lease';
import type { ForceActions } from '../lib/sources/force';
import { forceActionsFor } from '../lib/sources/force-registry';
import { staleBuild } from '../scripts/tooling/build-fingerprint';
import { createPostgresDatabase } from '../tests/support/databases';
import { ROOT, testServices } from '../tests/support/services';
import { log, percentile, sleep, writeResultsSection } from './support';

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '200' },
    warmup: { type: 'string', default: '5' },
    port: { type: 'string', default: '3198' },
    write: { type: 'boolean', default: false },
    'stale-build': { type: 'boolean', default: false },
  },
});
const N = Number(values.n);
const WARMUP = Number(values.warmup);
const PORT = Number(values.port);
if (!Number.isInteger(N) || N < 1 || !Number.isInteger(WARMUP) || WARMUP < 0) throw new Error('--n is a whole number above 0, --warmup one from 0');
const stale = staleBuild(ROOT);
if (stale && !values['stale-build']) {
  console.error(`admin-bench: ${stale}. This bench serves the existing build and never builds: run \`npm run build\` first (or pass --stale-build for a check run).`);
  process.exit(2);
}
if (stale && values.write) {
  console.error('admin-bench: --write records figures of a current build only');
  process.exit(2);
}

const services = testServices();
const RUN = randomBytes(4).toString('hex');
const PG_TABLE = `adminbench_leases_${RUN}`;
const REDIS_PREFIX = `adminbench${RUN}:`;
const ETCD_PREFIX = `adminbench${RUN}/`;
const POLL_MS = 250;
const TTL_MS = 30_000;
const REASON = 'admin-bench: timing one force-expire end to end';
const startLoad = os.loadavg();

type Keys = { leaseKey: string; sourceKey: string };
type Side = { times: number[]; failures: string[] };
type Backend = {
  name: string;
  source: SourceConfig;
  client: LeaseClient;
  keys: (label: string) => Keys;
  /** new token = previous + 1 (Postgres, Redis); etcd's only rises. */
  plusOne: boolean;
  actions: ForceActions;
  ours: Side;
  bare: Side;
};

// Everything opened is closed at the end, in reverse, whatever failed.
const cleanups: { what: string; run: () => Promise<unknown> }[] = [];
const later = (what: string, run: () => Promise<unknown>) => cleanups.push({ what, run });
async function cleanUp() {
  for (const { what, run } of cleanups.splice(0).reverse()) {
    await run().catch((error: unknown) => log(`cleanup: ${what} failed: ${(error as Error).message}`));
  }
}

const db = await createPostgresDatabase('lh_adminbench');
later('drop the store database', () => db.drop());
let server: ReturnType<typeof spawn> | undefined;
process.on('exit', () => server?.kill('SIGTERM')); // a crash must not leave the server running
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
let report = '';
let failed = 0;
try {
  // ---------------------------------------------------------------- the backends, the sources
  const sql = new pg.Client(services.databaseUrl);
  await sql.connect();
  await sql.query(`CREATE TABLE ${PG_TABLE} (name VARCHAR(200) PRIMARY KEY, owner VARCHAR(200), expires_at TIMESTAMPTZ NOT NULL, token BIGINT NOT NULL DEFAULT 0)`);
  later('drop the lease table', async () => {
    await sql.query(`DROP TABLE IF EXISTS ${PG_TABLE}`);
    await sql.end();
  });
  later('delete the Redis keys', async () => {
    const redis = new Redis(services.redisUrl);
    for await (const keys of redis.scanStream({ match: `${REDIS_PREFIX}*`, count: 1_000 })) if ((keys as string[]).length) await redis.del(...(keys as string[]));
    redis.disconnect();
  });
  later('delete the etcd keys', async () => {
    const etcd = new Etcd3({ hosts: services.etcdEndpoints });
    await etcd.delete().prefix(ETCD_PREFIX);
    etcd.close();
  });
  const sources: SourceConfig[] = [
    { name: 'bench-pg', backend: 'postgres', url: services.databaseUrl, tables: [{ table: PG_TABLE, format: 'leasehold' }], advisoryLocks: false },
    { name: 'bench-redis', backend: 'redis', urls: [services.redisUrl], match: [`${REDIS_PREFIX}*`], fenceSuffix: ':fence', keyspaceNotifications: 'auto' },
    { name: 'bench-etcd', backend: 'etcd', endpoints: services.etcdEndpoints, prefixes: [ETCD_PREFIX] },
  ];
  const side = (): Side => ({ times: [], failures: [] });
  const backend = (name: string, source: SourceConfig, client: LeaseClient, keys: (label: string) => Keys, plusOne: boolean): Backend => {
    const actions = forceActionsFor(source);
    later(`close ${name}`, async () => {
      await actions.close();
      await client.close();
    });
    return { name, source, client, keys, plusOne, actions, ours: side(), bare: side() };
  };
  const backends = [
    backend('Postgres lease table', sources[0]!, createLeaseClient({ backend: 'postgres', url: services.databaseUrl, table: PG_TABLE }), (label) => ({ leaseKey: label, sourceKey: `${PG_TABLE}/${label}` }), true),
    backend('Redis (lib/lease layout)', sources[1]!, createLeaseClient({ backend: 'redis', urls: [services.redisUrl] }), (label) => ({ leaseKey: `${REDIS_PREFIX}${label}`, sourceKey: `${REDIS_PREFIX}${label}` }), true),
    backend('etcd single key', sources[2]!, createLeaseClient({ backend: 'etcd', endpoints: services.etcdEndpoints }), (label) => ({ leaseKey: `${ETCD_PREFIX}lock/${label}`, sourceKey: `${ETCD_PREFIX}lock/${label}` }), false),
  ];

  // ---------------------------------------------------------------- the store, the token, the server
  const store = await openStore({ kind: 'postgres', url: db.url });
  const { token: bearer } = await createToken(store, { name: 'admin-bench', role: 'operator', expiresAt: null, userId: null, createdBy: 'admin-bench' });
  await store.close();
  const configDir = mkdtempSync(path.join(os.tmpdir(), 'leasehold-admin-bench-'));
  later('remove the config', async () => rmSync(configDir, { recursive: true, force: true }));
  const configFile = path.join(configDir, 'leasehold.config.json');
  writeFileSync(configFile, JSON.stringify({ pollMs: POLL_MS, sources }));
  // scripts/start.ts, or with a stale build the `next start` it would spawn after building.
  const command = stale ? [path.join(ROOT, 'node_modules', 'next', 'dist', 'bin', 'next'), 'start', '--hostname', '127.0.0.1', '--port', String(PORT)] : ['--import', 'tsx', 'scripts/start.ts'];
  server = spawn(process.execPath, command, {
    cwd: ROOT,
    env: { ...process.env, NEXT_MANUAL_SIG_HANDLE: 'true', NEXT_TELEMETRY_DISABLED: '1', DATABASE_URL: db.url, LEASEHOLD_CONFIG: configFile, PORT: String(PORT), HOST: '127.0.0.1', LEASEHOLD_ANONYMOUS_ROLE: 'none', LEASEHOLD_DEMO: 'off', LEASEHOLD_COLLECTOR: undefined, LEASEHOLD_DATA_DIR: undefined },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const running = server;
  const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
  later('stop the server', async () => {
    if (running.exitCode !== null || running.signalCode !== null) return;
    running.kill('SIGTERM');
    if ((await Promise.race([exited.then(() => true), sleep(30_000).then(() => false)])) === false) log(`the server (pid ${running.pid}) did not stop within 30 s of SIGTERM`);
  });

  const call = (method: 'GET' | 'POST', url: string, body?: string): Promise<{ status: number; body: string }> =>
    new Promise((resolve, reject) => {
      const headers: Record<string, string> = { Authorization: `Bearer ${bearer}` };
      if (body !== undefined) Object.assign(headers, { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) });
      const request = http.request({ host: '127.0.0.1', port: PORT, path: url, method, headers, agent }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        response.on('error', reject);
      });
      request.on('error', reject);
      request.end(body);
    });
  for (const started = performance.now(); ; await sleep(200)) {
    if (running.exitCode !== null) throw new Error(`the server exited (code ${running.exitCode}) before it answered`);
    if (performance.now() - started > 120_000) throw new Error('the server did not answer within 2 minutes');
    if ((await call('GET', '/api/health/live').catch(() => ({ status: 0 }))).status === 200) break;
  }
  log(`server up on 127.0.0.1:${PORT}${stale ? ` (a stale build: ${stale})` : ''}; ${WARMUP} warm-up and ${N} measured iterations per backend`);

  // ---------------------------------------------------------------- one iteration of each
  const tokenProblem = (b: Backend, previous: bigint, done: { previousToken?: unknown; newToken?: unknown }): string | null => {
    if (done.previousToken !== previous.toString()) return `previousToken ${String(done.previousToken)}, expected ${previous}`;
    if (typeof done.newToken !== 'string' || !/^\d+$/.test(done.newToken)) return `newToken ${String(done.newToken)}`;
    const next = BigInt(done.newToken);
    return (b.plusOne ? next === previous + 1n : next > previous) ? null : `newToken ${next} after ${previous}, expected ${b.plusOne ? 'previous + 1' : 'above it'}`;
  };
  const grant = async (b: Backend, label: string, holder: string): Promise<Lease> => {
    const lease = await b.client.acquire(b.keys(label).leaseKey, { holder, ttlMs: TTL_MS, waitMs: 10_000, retryEveryMs: 20 });
    if (!lease) throw new Error(`${b.name}: no grant of ${label} within 10 s`);
    return lease;
  };
  // A failed action leaves the grant held: released, so the next iteration's grant is a fresh one.
  const fail = async (b: Backend, s: Side, lease: Lease, problem: string) => {
    s.failures.push(problem);
    log(`${b.name}: ${s === b.ours ? 'ours' : 'bare CAS'}: ${problem}`);
    await b.client.release(lease).catch(() => false);
  };

  const ours = async (b: Backend, measured: boolean) => {
    const lease = await grant(b, 'ours', 'bench-ours');
    const leasePath = `/api/v1/leases/${encodeURIComponent(`${b.source.name}/${b.keys('ours').sourceKey}`)}`;
    const token = lease.token.toString();
    for (const started = performance.now(); ; await sleep(10)) {
      const seen = await call('GET', leasePath);
      const view = seen.status === 200 ? (JSON.parse(seen.body) as LeaseView) : null;
      if (view?.state === 'held' && view.holder === lease.holder && view.token === token) break;
      if (performance.now() - started > 30_000) throw new Error(`${b.name}: the server did not show ${lease.holder} with token ${token} within 30 s (last: ${seen.status} ${seen.body.slice(0, 200)})`);
    }
    const body = JSON.stringify({ expectedHolder: lease.holder, expectedToken: token, reason: REASON });
    const started = performance.now();
    const answer = await call('POST', `${leasePath}/force-expire`, body);
    const ms = performance.now() - started;
    const problem = answer.status === 200 ? tokenProblem(b, lease.token, JSON.parse(answer.body) as object) : `HTTP ${answer.status}: ${answer.body.slice(0, 300)}`;
    if (problem) await fail(b, b.ours, lease, problem);
    else if (measured) b.ours.times.push(ms);
  };

  const bare = async (b: Backend, measured: boolean) => {
    const lease = await grant(b, 'bare', 'bench-bare');
    const request = { action: 'force-expire' as const, key: b.keys('bare').sourceKey, expectedHolder: lease.holder, expectedToken: lease.token.toString() };
    const started = performance.now();
    const done = await b.actions.execute(request, AbortSignal.timeout(15_000)).catch((error: unknown) => error as Error);
    const ms = performance.now() - started;
    const problem = done instanceof Error ? `${done.name}: ${done.message}` : tokenProblem(b, lease.token, done);
    if (problem) await fail(b, b.bare, lease, problem);
    else if (measured) b.bare.times.push(ms);
  };

  // Interleaved: each iteration runs one of each per backend, the order alternating.
  for (let i = -WARMUP; i < N; i++) {
    for (const b of backends) {
      if ((i + WARMUP) % 2 === 0) {
        await ours(b, i >= 0);
        await bare(b, i >= 0);
      } else {
        await bare(b, i >= 0);
        await ours(b, i >= 0);
      }
    }
    if (i >= 0 && ((i + 1) % 50 === 0 || i + 1 === N)) log(`${i + 1} / ${N}`);
  }

  // ---------------------------------------------------------------- the report
  const f = (ms: number) => (Number.isNaN(ms) ? '–' : ms < 10 ? ms.toFixed(2) : ms.toFixed(1));
  const ratio = (a: number, b: number) => (Number.isNaN(a) || Number.isNaN(b) ? '–' : (a / b).toFixed(1));
  const rows = backends.map((b) => {
    const [o50, o99, b50, b99] = [percentile(b.ours.times, 50), percentile(b.ours.times, 99), percentile(b.bare.times, 50), percentile(b.bare.times, 99)];
    failed += b.ours.failures.length + b.bare.failures.length;
    return `| ${b.name} | ${f(o50)} ms | ${f(o99)} ms | ${f(b50)} ms | ${f(b99)} ms | ${ratio(o50, b50)} | ${ratio(o99, b99)} | ${b.ours.failures.length} / ${b.bare.failures.length} |`;
  });
  const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(' / ');
  report = [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${os.cpus()[0]?.model.trim()} (${os.cpus().length} cores), ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}; ` +
      `load average ${load(startLoad)} at the start, ${load(os.loadavg())} at the end. ${N} force-expires per backend, each after ${WARMUP} warm-up iterations, one at a time, ` +
      `interleaved with the peer's (the order alternating); each on a new lib/lease grant (30 s TTL), which the server's store showed before the timing began.`,
    '',
    '| backend | ours p50 | ours p99 | bare CAS p50 | bare CAS p99 | ratio p50 | ratio p99 | failures (ours / bare) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...rows,
    '',
    `Ours: \`POST /api/v1/leases/{id}/force-expire\` with an operator's bearer token, from sending the request to the last byte of the answer (node:http, one keep-alive connection), ` +
      `to ${stale ? '`next start` (started directly: the build is stale)' : "`npm start`'s server (scripts/start.ts, `next start`)"} on a fresh PostgreSQL store, its collector watching the three sources (poll every ${POLL_MS} ms; Redis keyspace notifications as the server has them). ` +
      `Bare CAS: \`forceActionsFor(source).execute\` in the benchmark's process, the same compare-and-set the server sends. Ratio: ours / bare CAS.`,
    ...(stale ? ['', `**A check run, not a result:** the server ran a build older than the source (${stale}); the peer ran the source.`] : []),
  ].join('\n');
} finally {
  await cleanUp();
  agent.destroy();
}
console.log(report);
if (values.write) {
  writeResultsSection({ id: 'admin-bench', title: 'Force-expire end to end (issue 16)', command: 'node --import tsx bench/admin-bench.ts --write', report });
}
if (failed > 0) {
  console.error(`admin-bench: ${failed} action(s) failed or gave wrong tokens (see above): these figures leave them out`);
  process.exit(1);
}
process.exit(0);
