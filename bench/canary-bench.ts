// Benchmark (issue 27): what a source's canary lease costs its backend. For each backend, one
// collector (poll every second, alerts off) observes a small source of 10 leases, first without
// a canary and then with one renewed every --every ms, --seconds each after a settling time;
// the backend's own request counters are read at both ends of each window:
//   Redis       requests written to a redis-server of the bench's own, counted by a loopback
//               proxy (Redis's own counters count the commands a script runs one by one);
//   PostgreSQL  xact_commit of the source's own database (pg_stat_database; each statement
//               outside a transaction is one);
//   etcd        gRPC messages received (grpc_server_msg_received_total on its /metrics),
//               nothing else using that etcd meanwhile.
// Target: the canary adds at most one request per everyMs.
//
//   node --import tsx bench/canary-bench.ts [--seconds 20] [--every 1000] [--write]
import { parseArgs } from 'node:util';
import Redis from 'ioredis';
import pg from 'pg';
import type { SourceConfig } from '../lib/config';
import { openStore } from '../lib/db/store';
import { createLeaseClient } from '../lib/lease';
import { testCollector } from '../tests/support/collector';
import { createPostgresDatabase } from '../tests/support/databases';
import { startRedisServer } from '../tests/support/redis-servers';
import { testServices } from '../tests/support/services';
import { startTcpProxy } from '../tests/support/tcp-proxy';
import { log, sleep, writeResultsSection } from './support';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '20' }, every: { type: 'string', default: '1000' }, write: { type: 'boolean', default: false } } });
const windowMs = Number(values.seconds) * 1000;
const everyMs = Number(values.every);
const SETTLE_MS = 5_000;
const LEASES = 10;
const services = testServices();

type Counter = () => Promise<number>;
type Case = { backend: string; counts: string; source: (canary: boolean) => SourceConfig; counter: Counter; seed: () => Promise<void>; close: () => Promise<void> };

async function redisCase(): Promise<Case> {
  const server = await startRedisServer(16_391, ['--notify-keyspace-events', 'KEA']);
  const redis = new Redis(server.url);
  // Redis counts the commands a script runs as commands of their own: the requests are counted on the way in instead.
  const proxy = await startTcpProxy('127.0.0.1', server.port);
  return {
    backend: 'Redis',
    counts: "requests the collector's connections sent (a loopback proxy; a pipeline is one)",
    source: (canary) => ({ name: 'r', backend: 'redis', urls: [`redis://127.0.0.1:${proxy.port}`], match: ['bench:*'], fenceSuffix: ':fence', keyspaceNotifications: 'auto', ...(canary ? { canary: { key: 'bench:canary', ttlMs: 10 * everyMs, everyMs } } : {}) }) as SourceConfig,
    counter: async () => proxy.written(),
    seed: async () => {
      for (let i = 0; i < LEASES; i++) await redis.set(`bench:${i}`, `worker-${i}`, 'PX', 600_000);
    },
    close: async () => {
      redis.disconnect();
      await proxy.close();
      await server.kill();
    },
  };
}

async function postgresCase(): Promise<Case> {
  const db = await createPostgresDatabase('lh_cbsrc');
  const sql = new pg.Client(services.databaseUrl);
  await sql.connect();
  return {
    backend: 'PostgreSQL',
    counts: "transactions committed in the source's database (pg_stat_database)",
    source: (canary) => ({ name: 'p', backend: 'postgres', url: db.url, tables: [{ table: 'leases', format: 'leasehold' }], advisoryLocks: false, ...(canary ? { canary: { key: 'canary', ttlMs: 10 * everyMs, everyMs } } : {}) }) as SourceConfig,
    counter: async () => {
      // The statistics of other backends reach the view within a second or so: read after a pause, and clear this session's snapshot.
      await sql.query('SELECT pg_stat_clear_snapshot()');
      const { rows } = await sql.query<{ n: string }>('SELECT xact_commit::text AS n FROM pg_stat_database WHERE datname = $1', [new URL(db.url).pathname.slice(1)]);
      return Number(rows[0]!.n);
    },
    seed: async () => {
      const client = createLeaseClient({ backend: 'postgres', url: db.url, table: 'leases' });
      for (let i = 0; i < LEASES; i++) await client.acquire(`job-${i}`, { holder: `worker-${i}`, ttlMs: 600_000 });
      await client.close();
    },
    close: async () => {
      await sql.end();
      await db.drop();
    },
  };
}

async function etcdCase(): Promise<Case> {
  const endpoint = services.etcdEndpoints[0]!;
  const prefix = `/cbench-${Date.now().toString(36)}/`;
  const client = createLeaseClient({ backend: 'etcd', endpoints: services.etcdEndpoints });
  return {
    backend: 'etcd',
    counts: 'gRPC messages received (grpc_server_msg_received_total)',
    source: (canary) => ({ name: 'e', backend: 'etcd', endpoints: services.etcdEndpoints, prefixes: [prefix], ...(canary ? { canary: { key: `${prefix}canary`, ttlMs: Math.max(2_000, 10 * everyMs), everyMs } } : {}) }) as SourceConfig,
    counter: async () => {
      const text = await (await fetch(`${endpoint}/metrics`)).text();
      return [...text.matchAll(/^grpc_server_msg_received_total\{[^}]*\} (\d+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
    },
    seed: async () => {
      for (let i = 0; i < LEASES; i++) await client.acquire(`${prefix}job-${i}`, { holder: `worker-${i}`, ttlMs: 600_000 });
    },
    close: () => client.close(),
  };
}

type Row = { backend: string; counts: string; without: number; with: number };

async function measure(c: Case): Promise<Row> {
  await c.seed();
  const rates: number[] = [];
  for (const canary of [false, true]) {
    const storeDb = await createPostgresDatabase('lh_cbench');
    const store = await openStore({ kind: 'postgres', url: storeDb.url });
    const collector = testCollector(store, [c.source(canary)], { pollMs: 1_000 });
    await sleep(SETTLE_MS);
    const before = await c.counter();
    const started = performance.now();
    await sleep(windowMs);
    const seconds = (performance.now() - started) / 1000;
    await sleep(1_500);
    const after = await c.counter();
    rates.push((after - before) / seconds);
    log(`  ${c.backend} ${canary ? 'with' : 'without'} a canary: ${((after - before) / seconds).toFixed(1)} requests/s`);
    await collector.stop();
    await store.close();
    await storeDb.drop();
  }
  await c.close();
  return { backend: c.backend, counts: c.counts, without: rates[0]!, with: rates[1]! };
}

const rows: Row[] = [];
for (const make of [redisCase, postgresCase, etcdCase]) rows.push(await measure(await make()));
const per = 1000 / everyMs;
const report = [
  `Measured ${new Date().toISOString().slice(0, 10)}: one collector (poll every 1 s, alerts off) on a source of ${LEASES} leases, ${windowMs / 1000} s without a canary and then ${windowMs / 1000} s with one renewed every ${everyMs} ms (${per} a second), each after ${SETTLE_MS / 1000} s of settling; requests as each backend counts them.`,
  '',
  '| backend | counted as | requests/s without | with a canary | added by the canary / s | one per everyMs |',
  '|---|---|---:|---:|---:|---:|',
  ...rows.map((r) => `| ${r.backend} | ${r.counts} | ${r.without.toFixed(1)} | ${r.with.toFixed(1)} | ${(r.with - r.without).toFixed(2)} | ${per.toFixed(2)} |`),
].join('\n');
console.log(report);
if (values.write) writeResultsSection({ id: 'canary-bench', title: "Canary leases: what they cost the backend (issue 27)", command: 'node --import tsx bench/canary-bench.ts --write', report });
process.exit(0);
