// Benchmark (issue 28, point 1): what the lease rows of 10,000 renewals a second cost the
// store. Two ways of writing them: whole (lib/db/lease-rows.ts upsertLeases, every column, as
// every renewal batch was written) and in part (updateRenewedLeases: only what a renewal
// moves); on two layouts of the table: packed full (fillfactor 100, as before the migration
// 20261209000000_renewal_room) and with room on each page (fillfactor 70, as migrated now).
// 10,000 leases each renewed once a second: each batch is 10,000 lease rows in pieces of 4,000
// (MERGE_LIMIT, as the collector writes them), one transaction each (lib/db/observer-writes.ts
// writeBatch, ownership check included). On each store the two ways take turns batch by batch,
// so that whatever else the machine does falls on both. Reported: ms per batch (median, p95),
// rows/s, and this process's CPU per batch (making the JSON rows); the server's is the rest.
//
//   node --import tsx bench/renewal-write-bench.ts [--batches 30] [--leases 10000] [--write]
import { parseArgs } from 'node:util';
import { MERGE_LIMIT, emptyBatch } from '../lib/collector/write-queue';
import { writeBatch } from '../lib/db/observer-writes';
import { openStore } from '../lib/db/store';
import type { TrackedLease } from '../lib/domain/observe';
import { newTrackedLease } from '../lib/domain/tracked-lease';
import { createPostgresDatabase } from '../tests/support/databases';
import { gitHead, log, percentile, writeResultsSection } from './support';

const { values } = parseArgs({ options: { batches: { type: 'string', default: '30' }, leases: { type: 'string', default: '10000' }, write: { type: 'boolean', default: false } } });
const BATCHES = Number(values.batches);
const LEASES = Number(values.leases);
const WARMUP = 3;
const writer = { collectorId: 'bench', token: 1n, ringSize: 120, source: { name: 'bench' } };
const sourceRow = { name: 'bench', backend: 'redis' as const, status: 'up' as const, lastGoodReadAt: null, lastError: null, lastPollMs: null, pollMs: 1_000, detail: null };
type Times = { ms: number[]; cpuMs: number[] };

/** Both ways on a new store whose Lease table has `fillfactor` (null: as migrated). */
async function measure(fillfactor: number | null): Promise<Record<'whole' | 'part', Times>> {
  const db = await createPostgresDatabase('lh_bench_renewal_writes');
  const store = await openStore({ kind: 'postgres', url: db.url });
  try {
    if (fillfactor !== null) await store.withSql((sql) => sql.exec(`ALTER TABLE "Lease" SET (fillfactor = ${fillfactor}); ALTER TABLE "RenewalSample" SET (fillfactor = ${fillfactor})`));
    const start = Date.now();
    let leases: TrackedLease[] = Array.from({ length: LEASES }, (_, i) => ({
      ...newTrackedLease({ source: 'bench', backend: 'redis', startedMono: 0, startedWall: start }, 'lock', `orders:lock:${i}`),
      state: 'held' as const,
      holder: `worker-${i % 50}:${(i * 7919).toString(16)}`,
      token: BigInt(1_000 + i),
      ttlMs: 30_000,
      acquiredAtWall: start,
      expiresAtWall: start + 30_000,
      detail: { layout: 'leasehold', fence: `orders:lock:${i}:fence`, instances: 1 },
      version: 1,
    }));
    for (let i = 0; i < LEASES; i += MERGE_LIMIT) await writeBatch(store, { ...emptyBatch(writer, i === 0 ? sourceRow : null), dirty: leases.slice(i, i + MERGE_LIMIT) });
    log(`fillfactor ${fillfactor ?? 'as migrated'}: ${LEASES} leases written; ${BATCHES} batches of ${LEASES} renewals each way`);
    const times: Record<'whole' | 'part', Times> = { whole: { ms: [], cpuMs: [] }, part: { ms: [], cpuMs: [] } };
    for (let b = 0; b < 2 * (BATCHES + WARMUP); b++) {
      const way = b % 2 === 0 ? 'whole' : 'part';
      const at = start + (b + 1) * 1_000;
      leases = leases.map((l) => ({ ...l, version: l.version + 1, renewalSeq: l.renewalSeq + 1, renewedAtWall: at, observedAtWall: at, expiresAtWall: at + 30_000, lastRenewal: { intervalMs: 1_000, marginMs: 29_000 } }));
      const cpu = process.cpuUsage();
      const started = performance.now();
      for (let i = 0; i < LEASES; i += MERGE_LIMIT) {
        await writeBatch(store, { ...emptyBatch(writer, null), dirty: leases.slice(i, i + MERGE_LIMIT), ...(way === 'part' ? { renewedOnly: true } : {}) });
      }
      const ms = performance.now() - started;
      const used = process.cpuUsage(cpu);
      if (b >= 2 * WARMUP) {
        times[way].ms.push(ms);
        times[way].cpuMs.push((used.user + used.system) / 1000);
      }
    }
    // Both ways wrote every row: the last batch's expiry is in each.
    const [check] = await store.withSql((sql) => sql.query<{ n: string }>(`SELECT count(*)::text AS n FROM "Lease" WHERE "expiresAt" = $1::timestamptz`, [new Date(leases[0]!.expiresAtWall!).toISOString()]));
    if (Number(check!.n) !== LEASES) throw new Error(`expected ${LEASES} rows with the last expiry, found ${check!.n}`);
    return times;
  } finally {
    await store.close();
    await db.drop();
  }
}

const packed = await measure(100);
const migrated = await measure(null);
const median = (t: Times) => percentile(t.ms, 50);
const row = (name: string, t: Times) =>
  `| ${name} | ${Math.round(median(t))} ms | ${Math.round(percentile(t.ms, 95))} ms | ${Math.round(LEASES / (median(t) / 1000)).toLocaleString('en')} | ${Math.round(percentile(t.cpuMs, 50))} ms |`;
const report = [
  `Measured on commit ${gitHead('.')}, PostgreSQL of .leasehold/services (loopback), a 2-core machine; ${LEASES.toLocaleString('en')} leases each renewed once a second, ${BATCHES} batches each way on each layout, the ways taken in turns (the first ${WARMUP} of each left out).`,
  '',
  "| Lease rows of a renewal batch | ms per batch (median) | p95 | rows/s at the median | this process's CPU per batch (median) |",
  '|---|---|---|---|---|',
  row('whole rows, pages packed full (before)', packed.whole),
  row('only what a renewal moves, pages packed full', packed.part),
  row('whole rows, room on each page (fillfactor 70)', migrated.whole),
  row('only what a renewal moves, room on each page (now)', migrated.part),
  '',
  `Now against before: ${(median(packed.whole) / median(migrated.part)).toFixed(2)}× less time per batch (written in part alone: ${(median(packed.whole) / median(packed.part)).toFixed(2)}×; the room alone: ${(median(packed.whole) / median(migrated.whole)).toFixed(2)}×).`,
].join('\n');
console.log(report);
if (values.write) writeResultsSection({ id: 'renewal-writes', title: 'Lease rows of 10,000 renewals a second (issue 28)', command: 'node --import tsx bench/renewal-write-bench.ts --write', report });
