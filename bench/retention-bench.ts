// Benchmark (issue 28, point 4): what partitioning the time-series tables costs and takes.
//   1. Converting a store: a PostgreSQL store migrated up to the migration before
//      20261208000000_partitions is filled with --rows lease events and --rows renewal rollups
//      spread over the last 30 days, then the partitions migration is applied and timed.
//   2. Writing renewal rollups at 10,000 renewals a second: 10,000 leases each renewed once a
//      second, so each second's batch upserts one rollup row per lease (the minute's row, as the
//      collector's renewal batcher writes it, lib/db/lease-rows.ts upsertRollups), --batches
//      batches in a row, into a store with the partitioned table and into one without (migrated
//      only up to the migration before). Reported: ms per batch (median, p95) and rows/s.
//
//   node --import tsx bench/retention-bench.ts [--rows 500000] [--batches 30] [--write]
import path from 'node:path';
import { parseArgs } from 'node:util';
import { upsertRollups } from '../lib/db/lease-rows';
import type { WriteBatch } from '../lib/db/observer-batch';
import { migrate, readMigrations } from '../lib/db/migrate';
import type { SqlSession } from '../lib/db/sql';
import { createPostgresDatabase } from '../tests/support/databases';
import { gitHead, log, percentile, writeResultsSection } from './support';

const { values } = parseArgs({ options: { rows: { type: 'string', default: '500000' }, batches: { type: 'string', default: '30' }, write: { type: 'boolean', default: false } } });
const ROWS = Number(values.rows);
const BATCHES = Number(values.batches);
const LEASES = 10_000;
const all = readMigrations(path.resolve('prisma/migrations'));
const lastIndex = all.findIndex((m) => m.name === '20261208000000_partitions');
const before = all.slice(0, lastIndex);
const upTo = all.slice(0, lastIndex + 1);

async function seedLeases(sql: SqlSession, count: number) {
  await sql.exec(`INSERT INTO "Source" (name, backend, "updatedAt") VALUES ('b', 'redis', now())`);
  await sql.query(`INSERT INTO "Lease" (id, "sourceName", backend, kind, key, state, "observedAt", "updatedAt")
                   SELECT 'b/k' || i, 'b', 'redis', 'lock', 'k' || i, 'held', now(), now() FROM generate_series(0, $1::int - 1) i`, [count]);
}

async function conversion(): Promise<string> {
  const db = await createPostgresDatabase('lh_bench_retention');
  const sql = await db.connect();
  try {
    await migrate(sql, { migrations: before });
    await seedLeases(sql, 100);
    log(`filling ${ROWS} lease events and ${ROWS} renewal rollups over 30 days`);
    await sql.query(`INSERT INTO "LeaseEvent" ("leaseId", seq, type, at, holder)
                     SELECT 'b/k' || (i % 100), i, 'acquired', now() - (i % 43200) * interval '1 minute', 'holder-' || (i % 7) FROM generate_series(1, $1::int) i`, [ROWS]);
    await sql.query(`INSERT INTO "RenewalRollup" ("leaseId", minute, count, "intervalMin", "intervalP50", "intervalP99", "intervalMax", "marginMin", "marginP50", "marginP99", "marginMax")
                     SELECT 'b/k' || (i % 100), date_trunc('minute', now()) - (i / 100) * interval '1 minute', 60, 900, 1000, 1100, 1200, 100, 200, 300, 400
                       FROM generate_series(0, $1::int - 1) i`, [ROWS]);
    await sql.exec('VACUUM ANALYZE');
    const [size] = await sql.query<{ mb: string }>(`SELECT round(pg_database_size(current_database()) / 1048576.0)::text AS mb`);
    const started = performance.now();
    await migrate(sql, { migrations: upTo });
    const ms = performance.now() - started;
    const [parts] = await sql.query<{ n: string }>(`SELECT count(*)::text AS n FROM pg_inherits WHERE inhparent IN ('"LeaseEvent"'::regclass, '"RenewalRollup"'::regclass)`);
    log(`converted in ${Math.round(ms)} ms`);
    return `| ${ROWS.toLocaleString('en')} events + ${ROWS.toLocaleString('en')} rollups (30 days, store ${size!.mb} MB) | ${(ms / 1000).toFixed(1)} s | ${Math.round((2 * ROWS) / (ms / 1000)).toLocaleString('en')} rows/s | ${parts!.n} |`;
  } finally {
    await sql.close();
    await db.drop();
  }
}

async function writeCost(partitioned: boolean): Promise<string> {
  const db = await createPostgresDatabase('lh_bench_retention');
  const sql = await db.connect();
  try {
    await migrate(sql, { migrations: partitioned ? upTo : before });
    await seedLeases(sql, LEASES);
    const times: number[] = [];
    const minute0 = Math.floor(Date.now() / 60_000) * 60_000;
    for (let b = 0; b < BATCHES; b++) {
      // Second b of the run: each lease's rollup of its minute, one more renewal counted.
      const minute = minute0 + Math.floor(b / 60) * 60_000;
      const stats = { count: (b % 60) + 1, intervalMin: 900, intervalP50: 1000, intervalP99: 1100, intervalMax: 1200, marginMin: 100, marginP50: 200, marginP99: 300, marginMax: 400 };
      const rollups = Array.from({ length: LEASES }, (_, i) => ({ leaseId: `b/k${i}`, minute, stats }));
      const started = performance.now();
      await sql.transaction((tx) => upsertRollups(tx, { rollups } as unknown as WriteBatch));
      times.push(performance.now() - started);
    }
    const measured = times.slice(3); // the first batches warm the caches up
    const median = percentile(measured, 50);
    log(`${partitioned ? 'partitioned' : 'one table'}: median ${median.toFixed(0)} ms per batch of ${LEASES}`);
    return `| ${partitioned ? 'partitioned by day (DEFAULT + daily)' : 'one table (before the migration)'} | ${median.toFixed(0)} ms | ${percentile(measured, 95).toFixed(0)} ms | ${Math.round(LEASES / (median / 1000)).toLocaleString('en')} |`;
  } finally {
    await sql.close();
    await db.drop();
  }
}

const conversionRow = await conversion();
const withoutRow = await writeCost(false);
const withRow = await writeCost(true);
const report = [
  `Measured on commit ${gitHead(process.cwd())}, PostgreSQL of .leasehold/services (loopback), a 2-core machine shared with other work.`,
  '',
  'Converting a store (the migration 20261208000000_partitions, one transaction):',
  '',
  '| Store | Migration | Copy rate | Partitions made (2 tables) |',
  '|---|---|---|---|',
  conversionRow,
  '',
  `Writing renewal rollups at 10,000 renewals a second (${LEASES.toLocaleString('en')} rows upserted per batch, one batch a second's worth, ${BATCHES} batches, the first 3 left out):`,
  '',
  '| RenewalRollup | ms per batch (median) | p95 | rows/s at the median |',
  '|---|---|---|---|',
  withoutRow,
  withRow,
].join('\n');
console.log(report);
if (values.write) writeResultsSection({ id: 'retention', title: 'Partitions and retention: converting a store, and the write cost (issue 28)', command: 'node --import tsx bench/retention-bench.ts --write', report });
