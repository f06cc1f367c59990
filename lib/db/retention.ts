// Retention (config.retention, docs/architecture.md "Partitions and retention"): keeps the store
// bounded. The time-series tables are partitioned by UTC day (prisma/migrations/
// 20261208000000_partitions); one run of applyRetention
//   1. makes the partitions of today and the next days (a day whose rows already sit in the
//      DEFAULT partition has them moved into its new partition in the same transaction),
//   2. drops the partitions entirely older than the retention (events: eventDays; rollups:
//      rollupDays): DETACH then DROP, in one transaction,
//   3. deletes, row by row in batches, what is old and not in a daily partition: the DEFAULT
//      partitions' old rows, HolderClaim rows not reported for eventDays, finished
//      WebhookDelivery rows (delivered, dead) created more than eventDays ago.
// Every statement runs under a short lock_timeout: a step that would wait on the collector's
// writes gives up (it is named in `busy`) and is tried again on the next run. On PostgreSQL one
// process at a time runs it (a session advisory lock, tried and never waited for).
import type { SqlSession } from './sql';

/** The advisory lock key of a retention run ("LHRT"), beside prisma migrate's 72707369. */
export const RETENTION_LOCK_KEY = 0x4c485254;
const DAY_MS = 86_400_000;
const DELETE_BATCH = 5_000;

export type PartitionedTable = { table: string; column: string; keep: 'eventDays' | 'rollupDays' };

/** The partitioned tables, their partition column, and which retention applies. */
export const PARTITIONED_TABLES: readonly PartitionedTable[] = [
  { table: 'LeaseEvent', column: 'at', keep: 'eventDays' },
  { table: 'SourceEvent', column: 'at', keep: 'eventDays' },
  { table: 'RenewalRollup', column: 'minute', keep: 'rollupDays' },
  { table: 'HolderRollup', column: 'minute', keep: 'rollupDays' },
  { table: 'CanaryRollup', column: 'minute', keep: 'rollupDays' },
];

export type RetentionPolicy = {
  eventDays: number;
  rollupDays: number;
  /** Partitions made ahead of today (default 7: a week of runs that find the store busy before rows land in DEFAULT). */
  daysAhead?: number;
  /** How long a statement may wait for a lock before the step is left to the next run (default 100 ms). */
  lockTimeoutMs?: number;
};

export type RetentionReport = {
  /** false: another process holds the retention lock; nothing was done. */
  ran: boolean;
  /** Partitions made ("LeaseEvent_p20261208"), and rows moved into them from the DEFAULT partition. */
  created: string[];
  moved: number;
  /** Partitions dropped, and their size on disk before. */
  dropped: string[];
  droppedBytes: number;
  /** Rows deleted, by table ("LeaseEvent_default", "HolderClaim", "WebhookDelivery"). */
  deleted: Record<string, number>;
  /** Steps that gave up on a lock (lock_timeout), tried again next run. */
  busy: string[];
};

const q = (name: string) => `"${name.replace(/"/g, '""')}"`;
const dayName = (table: string, day: number) => `${table}_p${new Date(day).toISOString().slice(0, 10).replace(/-/g, '')}`;
const startOfDay = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS;
const bound = (ms: number) => `'${new Date(ms).toISOString()}'`;
/** A statement that waited longer than lock_timeout (55P03 lock_not_available). */
const isLockTimeout = (error: unknown) => (error as { code?: string })?.code === '55P03';

/** The cutoff for a table: rows with their time before it are past the retention. */
export function retentionCutoff(policy: RetentionPolicy, keep: PartitionedTable['keep'], now: Date): Date {
  return new Date(now.getTime() - policy[keep] * DAY_MS);
}

/** One run (see the top of this file). Never waits on a lock longer than lockTimeoutMs; fails only on an unexpected database error. */
export async function applyRetention(sql: SqlSession, policy: RetentionPolicy, now: Date): Promise<RetentionReport> {
  const report: RetentionReport = { ran: false, created: [], moved: 0, dropped: [], droppedBytes: 0, deleted: {}, busy: [] };
  const locking = sql.kind === 'postgres';
  if (locking) {
    const [row] = await sql.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [RETENTION_LOCK_KEY]);
    if (!row?.locked) return report;
  }
  report.ran = true;
  const step = stepRunner(sql, policy.lockTimeoutMs ?? 100, report);
  try {
    for (const spec of PARTITIONED_TABLES) {
      const cutoff = retentionCutoff(policy, spec.keep, now);
      for (const day of await daysToMake(sql, spec, now, cutoff, policy.daysAhead ?? 7)) {
        await step(`create ${dayName(spec.table, day)}`, (tx) => makePartition(tx, spec, day, report));
      }
      const expired = await partitionsBefore(sql, spec.table, cutoff);
      if (expired.length > 0) await step(`drop ${expired.join(', ')}`, (tx) => dropPartitions(tx, spec.table, expired, report));
      await deleteInBatches(step, report, `${spec.table}_default`, `${q(spec.column)} < $1`, [cutoff]);
    }
    const eventCutoff = retentionCutoff(policy, 'eventDays', now);
    await deleteInBatches(step, report, 'HolderClaim', `"reportedAt" < $1`, [eventCutoff]);
    await deleteInBatches(step, report, 'WebhookDelivery', `"status" IN ('delivered', 'dead') AND "createdAt" < $1`, [eventCutoff]);
  } finally {
    if (locking) await sql.query('SELECT pg_advisory_unlock($1)', [RETENTION_LOCK_KEY]).catch(() => {});
  }
  return report;
}

type Step = (name: string, work: (tx: SqlSession) => Promise<void>) => Promise<boolean>;

/** Runs one step in its own transaction under lock_timeout; a lock timeout is noted in `busy`, not thrown. */
function stepRunner(sql: SqlSession, lockTimeoutMs: number, report: RetentionReport): Step {
  return async (name, work) => {
    try {
      await sql.transaction(async (tx) => {
        await tx.exec(`SET LOCAL lock_timeout = '${Math.max(1, Math.round(lockTimeoutMs))}ms'`);
        await work(tx);
      });
      return true;
    } catch (error) {
      if (!isLockTimeout(error)) throw error;
      report.busy.push(name);
      return false;
    }
  };
}

/** Today and the days ahead, and the days within the retention whose rows sit in the DEFAULT partition; those without a partition yet. */
async function daysToMake(sql: SqlSession, spec: PartitionedTable, now: Date, cutoff: Date, daysAhead: number): Promise<number[]> {
  const today = startOfDay(now.getTime());
  const days = new Set<number>();
  for (let i = 0; i <= daysAhead; i++) days.add(today + i * DAY_MS);
  const stray = await sql.query<{ day: string }>(
    `SELECT DISTINCT to_char(${q(spec.column)} AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day FROM ${q(`${spec.table}_default`)} WHERE ${q(spec.column)} >= $1`,
    [cutoff],
  );
  for (const row of stray) days.add(Date.parse(`${row.day}T00:00:00Z`));
  const existing = new Set(await partitionNames(sql, spec.table));
  return [...days].sort((a, b) => a - b).filter((day) => !existing.has(dayName(spec.table, day)));
}

/** The daily partitions of `table` (named <table>_pYYYYMMDD), oldest first. */
export async function partitionNames(sql: SqlSession, table: string): Promise<string[]> {
  const rows = await sql.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = to_regclass($1) ORDER BY c.relname`,
    [q(table)],
  );
  const pattern = new RegExp(`^${table}_p\\d{8}$`);
  return rows.map((row) => row.name).filter((name) => pattern.test(name));
}

/** The daily partitions whose whole day ends at or before `cutoff`. */
async function partitionsBefore(sql: SqlSession, table: string, cutoff: Date): Promise<string[]> {
  return (await partitionNames(sql, table)).filter((name) => {
    const digits = name.slice(-8);
    const start = Date.parse(`${digits.slice(0, 4)}-${digits.slice(4, 6)}-${digits.slice(6, 8)}T00:00:00Z`);
    return start + DAY_MS <= cutoff.getTime();
  });
}

/**
 * Makes the partition of one day: a table like the parent, filled with the rows of that day the
 * DEFAULT partition holds (moved: deleted there in this same transaction, so no row is ever
 * missing nor in two places), then attached. ATTACH locks the parent only in SHARE UPDATE
 * EXCLUSIVE mode, which the collector's inserts do not wait for (CREATE TABLE ... PARTITION OF
 * would lock it exclusively).
 */
async function makePartition(tx: SqlSession, spec: PartitionedTable, day: number, report: RetentionReport): Promise<void> {
  const name = dayName(spec.table, day);
  const range = `FOR VALUES FROM (${bound(day)}) TO (${bound(day + DAY_MS)})`;
  const fallback = q(`${spec.table}_default`);
  const inDay = `${q(spec.column)} >= $1 AND ${q(spec.column)} < $2`;
  // ATTACH takes this lock anyway (to check the DEFAULT partition holds no row of the new range);
  // taken first, no row of that day can reach the DEFAULT partition between the move and the attach.
  await tx.exec(`LOCK TABLE ${fallback} IN ACCESS EXCLUSIVE MODE`);
  await tx.exec(`CREATE TABLE ${q(name)} (LIKE ${q(spec.table)} INCLUDING DEFAULTS)`);
  const moved = await tx.query<{ n: string }>(
    `WITH moved AS (DELETE FROM ${fallback} WHERE ${inDay} RETURNING *),
          copied AS (INSERT INTO ${q(name)} SELECT * FROM moved RETURNING 1)
     SELECT count(*)::text AS n FROM copied`,
    [new Date(day), new Date(day + DAY_MS)],
  );
  await tx.exec(`ALTER TABLE ${q(spec.table)} ATTACH PARTITION ${q(name)} ${range}`);
  report.moved += Number(moved[0]?.n ?? 0);
  report.created.push(name);
}

/**
 * Detaches and drops a table's expired partitions, all in one transaction: DETACH locks the
 * parent, and dropping a partition's foreign key to "Lease" or "Source" locks that table for a
 * moment too (PostgreSQL takes ACCESS EXCLUSIVE on the referenced table to drop its triggers),
 * so one short wait per table and run, never more than lock_timeout, rather than one per day.
 */
async function dropPartitions(tx: SqlSession, table: string, partitions: string[], report: RetentionReport): Promise<void> {
  const [size] = await tx.query<{ bytes: string }>('SELECT coalesce(sum(pg_total_relation_size(to_regclass(p))), 0)::text AS bytes FROM unnest($1::text[]) p', [partitions.map(q)]);
  for (const partition of partitions) await tx.exec(`ALTER TABLE ${q(table)} DETACH PARTITION ${q(partition)}`);
  await tx.exec(`DROP TABLE ${partitions.map(q).join(', ')}`);
  report.dropped.push(...partitions);
  report.droppedBytes += Number(size?.bytes ?? 0);
}

/** Deletes the rows of `table` matching `where`, DELETE_BATCH at a time, each batch its own step. */
async function deleteInBatches(step: Step, report: RetentionReport, table: string, where: string, params: unknown[]): Promise<void> {
  for (;;) {
    let count = 0;
    const done = await step(`delete from ${table}`, async (tx) => {
      const rows = await tx.query<{ n: string }>(
        `WITH gone AS (DELETE FROM ${q(table)} WHERE ctid IN (SELECT ctid FROM ${q(table)} WHERE ${where} LIMIT ${DELETE_BATCH}) RETURNING 1)
         SELECT count(*)::text AS n FROM gone`,
        params,
      );
      count = Number(rows[0]?.n ?? 0);
    });
    if (count > 0) report.deleted[table] = (report.deleted[table] ?? 0) + count;
    if (!done || count < DELETE_BATCH) return;
  }
}
