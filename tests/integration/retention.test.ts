// Retention (lib/db/retention.ts) on real stores: a store whose events, rollups, claims and
// deliveries span 120 days shrinks to what eventDays 90 / rollupDays 30 keep, every younger row
// still there (counted and hashed per table before and after); a row that landed in the DEFAULT
// partition is moved, not lost, when its day's partition is made; and on PostgreSQL a run that
// meets a writer's lock gives up after its lock_timeout and succeeds on the next run.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, readMigrations } from '../../lib/db/migrate';
import { openStore } from '../../lib/db/store';
import { renderMetrics } from '../../lib/metrics';
import { testCollector } from '../support/collector';
import { applyRetention, PARTITIONED_TABLES, partitionNames, RETENTION_LOCK_KEY, type RetentionPolicy } from '../../lib/db/retention';
import type { SqlSession } from '../../lib/db/sql';
import { createPostgresDatabase, STORE_KINDS, type TestDatabase } from '../support/databases';

const DAY = 86_400_000;
const DAYS = 120;
const KEEP: RetentionPolicy = { eventDays: 90, rollupDays: 30 };
/** A retention that keeps everything: its run makes the partitions of the 120 days (moving their rows out of DEFAULT). */
const KEEP_ALL: RetentionPolicy = { eventDays: 400, rollupDays: 400 };

/** The column each table's retention looks at, and the days it keeps. */
const AGED = [
  ...PARTITIONED_TABLES.map((t) => ({ table: t.table, column: t.column, days: KEEP[t.keep] })),
  { table: 'HolderClaim', column: 'reportedAt', days: KEEP.eventDays },
  { table: 'WebhookDelivery', column: 'createdAt', days: KEEP.eventDays },
];

/** Fills the store: every table has rows on each of the last 120 days (at 00:30 UTC plus some minutes), some in the future day too. */
async function fill(sql: SqlSession, now: Date) {
  await sql.exec(`INSERT INTO "Source" (name, backend, "updatedAt") VALUES ('s', 'redis', now())`);
  await sql.exec(`INSERT INTO "Lease" (id, "sourceName", backend, kind, key, state, "observedAt", "updatedAt")
                  SELECT 's/k' || i, 's', 'redis', 'lock', 'k' || i, 'held', now(), now() FROM generate_series(0, 4) i`);
  await sql.exec(`INSERT INTO "Webhook" (id, name, url, secrets, rules, "updatedAt") VALUES ('w', 'w', 'http://127.0.0.1:9/x', ARRAY[]::text[], ARRAY[]::text[], now())`);
  const params = [now.toISOString(), DAYS];
  // Day d (0 = today): minute m of a 60-minute window from 00:30 UTC.
  const at = `date_trunc('day', $1::timestamptz AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' - d * interval '1 day' + interval '30 minutes' + m * interval '1 minute'`;
  await sql.query(`INSERT INTO "LeaseEvent" ("leaseId", seq, type, at, holder, detail)
                   SELECT 's/k' || (m % 5), d * 100 + m, 'acquired', ${at}, 'h', '{"pad": "${'x'.repeat(200)}"}'::jsonb
                     FROM generate_series(0, $2::int) d, generate_series(0, 59) m`, params);
  await sql.query(`INSERT INTO "SourceEvent" ("sourceName", seq, type, at) SELECT 's', d * 100 + m, 'source_down', ${at} FROM generate_series(0, $2::int) d, generate_series(0, 9) m`, params);
  await sql.query(`INSERT INTO "RenewalRollup" ("leaseId", minute, count, "intervalMin", "intervalP50", "intervalP99", "intervalMax", "marginMin", "marginP50", "marginP99", "marginMax")
                   SELECT 's/k' || l, ${at}, 10, 1, 2, 3, 4, 5, 6, 7, 8 FROM generate_series(0, $2::int) d, generate_series(0, 59) m, generate_series(0, 4) l`, params);
  await sql.query(`INSERT INTO "HolderRollup" ("leaseId", holder, minute, count, failed, "rttSumMs", "rttMaxMs", "lateCount", "lateSumMs", "lateMaxMs")
                   SELECT 's/k0', 'h', ${at}, 10, 0, 1, 1, 0, 0, 0 FROM generate_series(0, $2::int) d, generate_series(0, 59) m`, params);
  await sql.query(`INSERT INTO "CanaryRollup" (source, call, minute, count, failed, "sumMs", "maxMs", buckets)
                   SELECT 's', 'renew', ${at}, 10, 0, 1, 1, '{}'::jsonb FROM generate_series(0, $2::int) d, generate_series(0, 59) m`, params);
  await sql.query(`INSERT INTO "HolderClaim" ("leaseId", holder, claims, "reportedAt") SELECT 's/k0', 'h' || d, true, ${at} FROM generate_series(0, $2::int) d, generate_series(0, 0) m`, params);
  // Per day: delivered, dead and pending deliveries; a pending one is never deleted, however old.
  await sql.query(`INSERT INTO "WebhookDelivery" ("messageId", "webhookId", event, payload, status, "createdAt")
                   SELECT 'msg_' || d || '_' || m, 'w', 'alert.firing', '{}'::jsonb, (ARRAY['delivered', 'dead', 'pending'])[m % 3 + 1]::"DeliveryStatus", ${at}
                     FROM generate_series(0, $2::int) d, generate_series(0, 5) m`, params);
}

type Census = { total: number; young: number; youngHash: string; pendingOld: number };

/** Per table: all rows, the rows younger than its retention (and an md5 of them), old pending deliveries. */
async function census(sql: SqlSession, now: Date): Promise<Record<string, Census>> {
  const out: Record<string, Census> = {};
  for (const { table, column, days } of AGED) {
    const cutoff = new Date(now.getTime() - days * DAY);
    const [row] = await sql.query<{ total: string; young: string; hash: string | null; pending: string }>(
      `SELECT count(*)::text AS total, count(*) FILTER (WHERE t."${column}" >= $1)::text AS young,
              md5(string_agg(t::text, '|' ORDER BY t::text) FILTER (WHERE t."${column}" >= $1)) AS hash,
              ${table === 'WebhookDelivery' ? `count(*) FILTER (WHERE t."${column}" < $1 AND t.status = 'pending')::text` : `'0'`} AS pending
         FROM "${table}" t`,
      [cutoff],
    );
    out[table] = { total: Number(row!.total), young: Number(row!.young), youngHash: row!.hash ?? '', pendingOld: Number(row!.pending) };
  }
  return out;
}

/** Bytes of every partitioned table's tree (the parent, its partitions, their indexes and TOAST). */
async function treeBytes(sql: SqlSession): Promise<number> {
  const [row] = await sql.query<{ bytes: string }>(
    `SELECT sum(pg_total_relation_size(p.relid))::text AS bytes
       FROM unnest($1::text[]) AS t(name), LATERAL pg_partition_tree(('"' || t.name || '"')::regclass) p`,
    [PARTITIONED_TABLES.map((t) => t.table)],
  );
  return Number(row!.bytes);
}

const partitionOf = async (sql: SqlSession, table: string, where: string) =>
  (await sql.query<{ part: string }>(`SELECT tableoid::regclass::text AS part FROM "${table}" WHERE ${where}`)).map((r) => r.part.replace(/"/g, ''));

describe.each(STORE_KINDS)('retention on $kind', ({ create }) => {
  let db: TestDatabase;
  let sql: SqlSession;
  const now = new Date();
  beforeAll(async () => {
    db = await create();
    sql = await db.connect();
    await migrate(sql, { migrations: readMigrations(path.resolve('prisma/migrations')) });
    await fill(sql, now);
  });
  afterAll(async () => {
    await sql.close();
    await db.drop();
  });

  it('makes the partitions of the days whose rows sit in DEFAULT, moving the rows and losing none', async () => {
    // The migration made partitions from today on: the 120 days before sit in DEFAULT.
    expect(await partitionOf(sql, 'LeaseEvent', `at < now() - interval '2 days' LIMIT 1`)).toEqual(['LeaseEvent_default']);
    const before = await census(sql, now);
    const report = await applyRetention(sql, KEEP_ALL, now);
    expect(report.ran).toBe(true);
    expect(report.busy).toEqual([]);
    expect(report.dropped).toEqual([]);
    expect(report.moved).toBeGreaterThan(0);
    expect(await census(sql, now)).toEqual(before);
    for (const { table } of PARTITIONED_TABLES) {
      expect((await partitionNames(sql, table)).length, table).toBeGreaterThanOrEqual(DAYS + 1);
      const [{ n }] = (await sql.query<{ n: string }>(`SELECT count(*)::text AS n FROM "${table}_default"`)) as [{ n: string }];
      expect(Number(n), `${table}_default`).toBe(0);
    }
  });

  it('drops what is older than eventDays 90 / rollupDays 30, keeping every younger row', async () => {
    const before = await census(sql, now);
    const bytesBefore = await treeBytes(sql);
    const report = await applyRetention(sql, KEEP, now);
    const after = await census(sql, now);
    const bytesAfter = await treeBytes(sql);
    console.log(`retention test: tree ${(bytesBefore / 1048576).toFixed(1)} MiB -> ${(bytesAfter / 1048576).toFixed(1)} MiB; dropped ${report.dropped.length} partitions; deleted ${JSON.stringify(report.deleted)}`);
    expect(report.busy).toEqual([]);
    for (const { table, days } of AGED) {
      // Every young row is there, unchanged; the table shrank to about its retention's days.
      expect(after[table]!.young, table).toBe(before[table]!.young);
      expect(after[table]!.youngHash, table).toBe(before[table]!.youngHash);
      expect(after[table]!.total, table).toBeLessThan(before[table]!.total);
      const perDay = before[table]!.total / (DAYS + 1);
      expect(after[table]!.total, table).toBeLessThanOrEqual(Math.ceil(perDay * (days + 1)) + after[table]!.pendingOld);
    }
    expect(after.WebhookDelivery!.pendingOld).toBe(before.WebhookDelivery!.pendingOld);
    expect(after.WebhookDelivery!.pendingOld).toBeGreaterThan(0);
    // The tree lost at least the dropped partitions' bytes, and they were a good part of it.
    expect(report.droppedBytes).toBeGreaterThan(bytesBefore * 0.3);
    expect(bytesAfter).toBeLessThanOrEqual(bytesBefore - report.droppedBytes);
    // No partition entirely older than its retention is left; 91 / 31 days of partitions at most remain before tomorrow.
    for (const { table, keep } of PARTITIONED_TABLES) {
      const oldest = (await partitionNames(sql, table))[0]!;
      const start = Date.parse(`${oldest.slice(-8, -4)}-${oldest.slice(-4, -2)}-${oldest.slice(-2)}T00:00:00Z`);
      expect(start + DAY, table).toBeGreaterThan(now.getTime() - KEEP[keep] * DAY);
    }
    // A second run finds nothing more to do.
    const again = await applyRetention(sql, KEEP, now);
    expect(again.dropped).toEqual([]);
    expect(again.deleted).toEqual({});
  });

  it('a row that lands in DEFAULT (no partition for its day yet) is moved, not lost, when its day is made', async () => {
    const later = `date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' + interval '9 days 1 hour'`;
    await sql.exec(`INSERT INTO "LeaseEvent" ("leaseId", seq, type, at) VALUES ('s/k1', 999999, 'released', ${later})`);
    await sql.exec(`INSERT INTO "RenewalRollup" ("leaseId", minute, count, "intervalMin", "intervalP50", "intervalP99", "intervalMax", "marginMin", "marginP50", "marginP99", "marginMax")
                    VALUES ('s/k1', ${later}, 3, 1, 2, 3, 4, 5, 6, 7, 8)`);
    expect(await partitionOf(sql, 'LeaseEvent', 'seq = 999999')).toEqual(['LeaseEvent_default']);
    const before = await census(sql, now);
    const report = await applyRetention(sql, { ...KEEP, daysAhead: 10 }, now);
    expect(report.moved).toBe(2);
    expect(await census(sql, now)).toEqual(before);
    const [part] = await partitionOf(sql, 'LeaseEvent', 'seq = 999999');
    expect(part).toMatch(/^LeaseEvent_p\d{8}$/);
    expect(report.created).toContain(part);
    // The same insert again is still refused as a duplicate by the partitioned unique key.
    await sql.exec(`INSERT INTO "LeaseEvent" ("leaseId", seq, type, at) VALUES ('s/k1', 999999, 'released', ${later}) ON CONFLICT ("leaseId", seq, at) DO NOTHING`);
    expect(await partitionOf(sql, 'LeaseEvent', 'seq = 999999')).toEqual([part]);
  });
});

describe('retention never waits on the collector (postgres)', () => {
  let db: TestDatabase & { url: string };
  let sql: SqlSession;
  let writer: SqlSession;
  const now = new Date();
  beforeAll(async () => {
    db = await createPostgresDatabase('lh_retention');
    sql = await db.connect();
    writer = await db.connect();
    await migrate(sql, { migrations: readMigrations(path.resolve('prisma/migrations')) });
    await fill(sql, now);
    await applyRetention(sql, KEEP_ALL, now);
  });
  afterAll(async () => {
    await writer.close();
    await sql.close();
    await db.drop();
  });

  it('gives up on a partition a writer holds a lock on after lock_timeout, and drops it on the next run', async () => {
    // The partitions whose day ends before now - 90 days: those that start at or before now - 91 days.
    const oldLeaseEvents = (await partitionNames(sql, 'LeaseEvent')).filter((name) => name <= `LeaseEvent_p${new Date(now.getTime() - 91 * DAY).toISOString().slice(0, 10).replace(/-/g, '')}`);
    expect(oldLeaseEvents.length).toBeGreaterThan(20);
    // A collector's write in flight, as lib/db/observer-writes.ts makes it: its transaction
    // holds ROW EXCLUSIVE on "Lease" and on "LeaseEvent".
    await writer.exec('BEGIN');
    await writer.exec(`UPDATE "Lease" SET "lastSeq" = "lastSeq" + 1 WHERE id = 's/k2'`);
    await writer.exec(`INSERT INTO "LeaseEvent" ("leaseId", seq, type, at) VALUES ('s/k2', 777777, 'acquired', now())`);
    const started = performance.now();
    const busy = await applyRetention(sql, { ...KEEP, lockTimeoutMs: 100 }, now);
    const tookMs = performance.now() - started;
    // The drops that need a lock the writer holds (LeaseEvent itself; the tables whose foreign
    // key names "Lease") were tried once each, for at most 100 ms, and left; the others were done.
    const busyTables = busy.busy.map((step) => /^drop (\w+?)_p\d{8}/.exec(step)?.[1]);
    expect(busyTables.sort()).toEqual(['HolderRollup', 'LeaseEvent', 'RenewalRollup']);
    expect(busy.busy.find((step) => step.startsWith('drop LeaseEvent_'))!.slice('drop '.length).split(', ')).toEqual(oldLeaseEvents);
    expect(busy.dropped.some((name) => name.startsWith('LeaseEvent_'))).toBe(false);
    expect(busy.dropped.some((name) => name.startsWith('SourceEvent_'))).toBe(true);
    expect(busy.dropped.some((name) => name.startsWith('CanaryRollup_'))).toBe(true);
    console.log(`retention test: a run meeting a writer's locks took ${Math.round(tookMs)} ms (3 tables' drops left, at most 100 ms each)`);
    expect(tookMs).toBeLessThan(5_000);
    expect(await partitionNames(sql, 'LeaseEvent')).toEqual(expect.arrayContaining(oldLeaseEvents));
    // The writer was never refused: its transaction commits.
    await writer.exec(`INSERT INTO "LeaseEvent" ("leaseId", seq, type, at) VALUES ('s/k2', 777778, 'acquired', now())`);
    await writer.exec(`UPDATE "Lease" SET "lastSeq" = "lastSeq" + 1 WHERE id = 's/k2'`);
    await writer.exec('COMMIT');
    expect(await partitionOf(sql, 'LeaseEvent', `seq IN (777777, 777778)`)).toHaveLength(2);

    const next = await applyRetention(sql, { ...KEEP, lockTimeoutMs: 100 }, now);
    expect(next.busy).toEqual([]);
    expect(next.dropped).toEqual(expect.arrayContaining(oldLeaseEvents));
    const left = await partitionNames(sql, 'LeaseEvent');
    expect(left.filter((name) => oldLeaseEvents.includes(name))).toEqual([]);
  });

  it("makes the next days' partitions while a writer's insert is open on the table (ATTACH, not CREATE ... PARTITION OF)", async () => {
    // CanaryRollup has no foreign key: the insert's ROW EXCLUSIVE on it is all the writer holds.
    await writer.exec('BEGIN');
    await writer.exec(`INSERT INTO "CanaryRollup" (source, call, minute, count, failed, "sumMs", "maxMs", buckets) VALUES ('s', 'acquire', now(), 1, 0, 1, 1, '{}')`);
    try {
      const report = await applyRetention(sql, { ...KEEP, daysAhead: 16, lockTimeoutMs: 100 }, now);
      expect(report.busy.filter((step) => step.includes('CanaryRollup'))).toEqual([]);
      expect(report.created.filter((name) => name.startsWith('CanaryRollup_p')).length).toBeGreaterThanOrEqual(8);
    } finally {
      await writer.exec('COMMIT');
    }
  });

  it('runs in one process at a time: a run finds the lock taken and does nothing', async () => {
    await writer.query('SELECT pg_advisory_lock($1)', [RETENTION_LOCK_KEY]);
    try {
      const report = await applyRetention(sql, { eventDays: 1, rollupDays: 1 }, now);
      expect(report.ran).toBe(false);
      expect(report.dropped).toEqual([]);
      expect((await partitionNames(sql, 'RenewalRollup')).length).toBeGreaterThan(5);
    } finally {
      await writer.query('SELECT pg_advisory_unlock($1)', [RETENTION_LOCK_KEY]);
    }
  });
});

describe('the collector runs retention (postgres)', () => {
  it('at start: two collectors on one store, one run drops the expired partitions, logged and counted', async () => {
    const db = await createPostgresDatabase('lh_retention');
    const sql = await db.connect();
    const store = await openStore({ kind: 'postgres', url: db.url });
    try {
      await fill(sql, new Date());
      await applyRetention(sql, KEEP_ALL, new Date());
      const expired = (await partitionNames(sql, 'RenewalRollup')).length - 31;
      expect(expired).toBeGreaterThan(80);
      const lines: string[] = [];
      // Sources: none; the collectors run retention all the same (config.retention: 90 / 30 days).
      const collectors = [testCollector(store, [], { log: (line) => lines.push(line) }), testCollector(store, [], { log: (line) => lines.push(line) })];
      try {
        await expect.poll(() => lines.filter((line) => line.startsWith('retention: dropped')).length, { timeout: 30_000 }).toBe(1);
      } finally {
        await Promise.all(collectors.map((c) => c.stop()));
      }
      // Exactly one run did it: a second run (if the other process took the lock after) found nothing to drop.
      expect(lines.filter((line) => line.startsWith('retention: dropped'))).toHaveLength(1);
      expect(lines.find((line) => line.startsWith('retention: dropped'))).toMatch(/dropped \d+ partitions \(.*RenewalRollup_p\d{8}/);
      // Kept: the 30 days of rollupDays and today (31), and the 7 days made ahead.
      expect((await partitionNames(sql, 'RenewalRollup')).length).toBeLessThanOrEqual(31 + 7);
      expect(await renderMetrics()).toMatch(/leasehold_retention_removed_total\{table="RenewalRollup",what="partitions"\} \d+/);
    } finally {
      await store.close();
      await sql.close();
      await db.drop();
    }
  });
});
