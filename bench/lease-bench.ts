// Benchmark: acquire+release pairs per second, each lease client against a peer measured
// in the same run, on the same servers, awaited one pair at a time (the latency a caller
// sees). On a 2-core machine that also runs the servers, the load drifts by more than the
// differences we measure, so the cases of a group are interleaved finely: each round runs
// many short blocks of pairs, alternating between the cases, and a case's rate in a round
// is its pairs over its own time. The ratio is taken per round; the table shows medians.
//
//   node --import tsx bench/lease-bench.ts [--rounds 5] [--write]
//
// Needs the test services (`bash scripts/services.sh up`). With --write, replaces the
// lease section of bench/RESULTS.md with the table it prints.
import { execSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Etcd3 } from 'etcd3';
import Redis from 'ioredis';
import pg from 'pg';
import Redlock from 'redlock';
import { createLeaseClient } from '../lib/lease';
import { createPostgresDatabase } from '../tests/support/databases';
import { ROOT, testServices } from '../tests/support/services';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, write: { type: 'boolean', default: false } } });
const rounds = Number(values.rounds);
const services = testServices();

/** `iterations`: pairs per case per round, run in blocks of BLOCK alternating with the other cases. */
type Case = { group: string; name: string; iterations: number; pair: (i: number) => Promise<void> };
const BLOCK = 25;

const unique = () => randomBytes(4).toString('hex');
const must = (ok: unknown, what: string) => {
  if (!ok) throw new Error(`benchmark case failed: ${what}`);
};

async function main() {
  const cases: Case[] = [];
  const closers: (() => Promise<unknown>)[] = [];

  // ------------------------------------------------------------- Redis
  {
    const key = `bench:lock:${unique()}`;
    const ours = createLeaseClient({ backend: 'redis', urls: [services.redisUrl] });
    closers.push(() => ours.close());
    cases.push({
      group: 'redis',
      name: 'leasehold (SET NX PX + INCR fence; compare-and-delete)',
      iterations: 5_000,
      pair: async () => {
        const lease = await ours.acquire(key, { holder: 'bench', ttlMs: 30_000 });
        must(lease && (await ours.release(lease)), 'leasehold redis pair');
      },
    });

    const raw = new Redis(services.redisUrl);
    closers.push(() => raw.quit());
    raw.defineCommand('compareAndDelete', {
      numberOfKeys: 1,
      lua: "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0",
    });
    const rawKey = `bench:raw:${unique()}`;
    cases.push({
      group: 'redis',
      name: 'raw SET NX PX; compare-and-delete (no fence)',
      iterations: 5_000,
      pair: async (i) => {
        const value = `bench:${i}`;
        must((await raw.set(rawKey, value, 'PX', 30_000, 'NX')) === 'OK', 'raw set');
        must((await (raw as unknown as { compareAndDelete(k: string, v: string): Promise<number> }).compareAndDelete(rawKey, value)) === 1, 'raw del');
      },
    });

    const redlockClient = new Redis(services.redisUrl);
    closers.push(() => redlockClient.quit());
    const redlock = new Redlock([redlockClient as never], { retryCount: 0 });
    const redlockKey = `bench:redlock:${unique()}`;
    cases.push({
      group: 'redis',
      name: 'npm redlock 4.2.0 (one instance, no fence)',
      iterations: 5_000,
      pair: async () => {
        const lock = await redlock.lock(redlockKey, 30_000);
        await lock.unlock();
      },
    });
  }

  // ------------------------------------------------------------- PostgreSQL
  const db = await createPostgresDatabase('lh_bench');
  closers.push(() => db.drop());
  {
    const key = `bench-${unique()}`;
    const ours = createLeaseClient({ backend: 'postgres', url: db.url, table: 'leases', poolSize: 1 });
    closers.push(() => ours.close());
    cases.push({
      group: 'postgres',
      name: 'leasehold (upsert with token bump; compare-and-release)',
      iterations: 2_000,
      pair: async () => {
        const lease = await ours.acquire(key, { holder: 'bench', ttlMs: 30_000 });
        must(lease && (await ours.release(lease)), 'leasehold postgres pair');
      },
    });

    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    closers.push(() => pool.end());
    await pool.query(`CREATE TABLE IF NOT EXISTS bare_leases (name VARCHAR(100) PRIMARY KEY, owner VARCHAR(100), expires_at TIMESTAMPTZ NOT NULL, token BIGINT NOT NULL DEFAULT 0)`);
    const bareKey = `bare-${unique()}`;
    await pool.query(`INSERT INTO bare_leases VALUES ($1, NULL, now(), 0)`, [bareKey]);
    cases.push({
      group: 'postgres',
      name: "bare UPDATE (the seed's acquire; release by owner)",
      iterations: 2_000,
      pair: async () => {
        const acquired = await pool.query(
          `UPDATE bare_leases SET owner = $2, expires_at = now() + interval '30 seconds', token = token + 1
            WHERE name = $1 AND (expires_at < now() OR owner = $2) RETURNING token`,
          [bareKey, 'bench'],
        );
        must(acquired.rowCount === 1, 'bare acquire');
        await pool.query(`UPDATE bare_leases SET owner = NULL, expires_at = now() WHERE name = $1 AND owner = $2`, [bareKey, 'bench']);
      },
    });
  }

  // ------------------------------------------------------------- etcd
  {
    const key = `bench/lock/${unique()}`;
    const ours = createLeaseClient({ backend: 'etcd', endpoints: services.etcdEndpoints });
    closers.push(() => ours.close());
    cases.push({
      group: 'etcd',
      name: 'leasehold (lease grant + create-if-absent txn; read + revoke)',
      iterations: 300,
      pair: async () => {
        const lease = await ours.acquire(key, { holder: 'bench', ttlMs: 30_000 });
        must(lease && (await ours.release(lease)), 'leasehold etcd pair');
      },
    });

    const etcd = new Etcd3({ hosts: services.etcdEndpoints });
    closers.push(async () => etcd.close());
    const lockKey = `bench/etcd3lock/${unique()}`;
    cases.push({
      group: 'etcd',
      name: "etcd3 1.1.2's own lock()",
      iterations: 300,
      pair: async () => {
        const lock = etcd.lock(lockKey).ttl(30);
        await lock.acquire();
        await lock.release();
      },
    });
  }

  // Warm up every case, then run the rounds, each interleaving the cases of a group block by block.
  for (const c of cases) for (let i = 0; i < Math.min(200, c.iterations / 5); i++) await c.pair(i);
  const samples = new Map<Case, number[]>(cases.map((c) => [c, []]));
  const ratios = new Map<Case, number[]>(cases.map((c) => [c, []]));
  for (let round = 0; round < rounds; round++) {
    for (const group of ['redis', 'postgres', 'etcd']) {
      const inGroup = cases.filter((c) => c.group === group);
      const spent = new Map<Case, number>(inGroup.map((c) => [c, 0]));
      const blocks = inGroup[0]!.iterations / BLOCK;
      for (let block = 0; block < blocks; block++) {
        for (const c of block % 2 ? inGroup : [...inGroup].reverse()) {
          const started = performance.now();
          for (let i = 0; i < BLOCK; i++) await c.pair(block * BLOCK + i);
          spent.set(c, spent.get(c)! + performance.now() - started);
        }
      }
      for (const c of inGroup) {
        samples.get(c)!.push((blocks * BLOCK) / (spent.get(c)! / 1000));
        ratios.get(c)!.push(spent.get(c)! / spent.get(inGroup[0]!)!);
      }
    }
    process.stderr.write(`round ${round + 1}/${rounds} done\n`);
  }
  for (const close of closers.reverse()) await close().catch(() => {});

  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const lines: string[] = [];
  const version = (name: string) => JSON.parse(readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8')).version;
  const serverVersions = [
    `redis-server ${execSync('redis-server --version').toString().match(/v=(\S+)/)?.[1]}`,
    `PostgreSQL ${(await (async () => {
      const c = new pg.Client({ connectionString: services.databaseUrl });
      await c.connect();
      const v = (await c.query('SHOW server_version')).rows[0].server_version;
      await c.end();
      return v;
    })())}`,
    `etcd ${execSync(`curl -s ${services.etcdEndpoints[0]}/version`).toString().match(/"etcdserver":"([^"]+)"/)?.[1]}`,
  ];
  lines.push(
    `Measured ${new Date().toISOString().slice(0, 10)} on ${os.cpus()[0]?.model.trim()} (${os.cpus().length} cores), ${Math.round(os.totalmem() / 2 ** 30)} GiB, ` +
      `Node ${process.version}; ${serverVersions.join(', ')} on loopback; ioredis ${version('ioredis')}, pg ${version('pg')}, etcd3 ${version('etcd3')}, redlock ${version('redlock')}. ` +
      `Median of ${rounds} interleaved rounds; one pair awaited at a time.`,
    '',
    '| backend | client | pairs/s (median) | rounds (pairs/s) | ours, as % of this peer\'s rate (median of rounds) |',
    '|---|---|---:|---|---:|',
  );
  for (const group of ['redis', 'postgres', 'etcd']) {
    const inGroup = cases.filter((c) => c.group === group);
    for (const c of inGroup) {
      const m = median(samples.get(c)!);
      // Per round: the peer's time over ours for the same number of pairs = our rate over the peer's.
      const ratio = c === inGroup[0] ? '—' : `${(median(ratios.get(c)!) * 100).toFixed(0)} %`;
      lines.push(`| ${group} | ${c.name} | ${Math.round(m).toLocaleString('en')} | ${samples.get(c)!.map((s) => Math.round(s)).join(', ')} | ${ratio} |`);
    }
  }
  const table = lines.join('\n');
  console.log(table);
  if (values.write) {
    const file = path.join(ROOT, 'bench', 'RESULTS.md');
    const text = readFileSync(file, 'utf8');
    const start = '<!-- lease-bench:start -->';
    const end = '<!-- lease-bench:end -->';
    writeFileSync(file, text.replace(new RegExp(`${start}[\\s\\S]*${end}`), `${start}\n${table}\n${end}`));
    console.error(`wrote ${path.relative(ROOT, file)}`);
  }
}

await main();
