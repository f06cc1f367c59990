// A scheduled job guarded the way ShedLock guards one (net.javacrumbs.shedlock's JDBC lock
// provider with "use DB time"), for the full-stack demo: every server's cron fires the job,
// the first to take the row runs it, the others skip this round. No fencing token: a holder
// that stalls past lock_until can overlap with the next one, which is why Leasehold marks
// ShedLock rows as unfenced. The statements are ShedLock's own for PostgreSQL.
import type { SqlRunner } from './sql';

export const SHEDLOCK_TABLE = 'pixly.shedlock';

/** ShedLock's documented table, in the demo's schema. */
export const SHEDLOCK_SCHEMA = `
  CREATE TABLE IF NOT EXISTS ${SHEDLOCK_TABLE} (
    name       VARCHAR(64)  NOT NULL PRIMARY KEY,
    lock_until TIMESTAMP    NOT NULL,
    locked_at  TIMESTAMP    NOT NULL,
    locked_by  VARCHAR(255) NOT NULL)`;

const NOW = "timezone('utc', CURRENT_TIMESTAMP)";

/** Takes the lock for at most `atMostMs` when no one holds it; true when this caller has it. */
export async function tryLock(db: SqlRunner, name: string, by: string, atMostMs: number): Promise<boolean> {
  const { rows } = await db.query<{ name: string }>(
    `INSERT INTO ${SHEDLOCK_TABLE} (name, lock_until, locked_at, locked_by)
          VALUES ($1, ${NOW} + $2 * interval '1 millisecond', ${NOW}, $3)
     ON CONFLICT (name) DO UPDATE SET lock_until = EXCLUDED.lock_until, locked_at = EXCLUDED.locked_at, locked_by = EXCLUDED.locked_by
           WHERE ${SHEDLOCK_TABLE}.lock_until <= ${NOW}
     RETURNING name`,
    [name, atMostMs, by],
  );
  return rows.length > 0;
}

/** Ends the run: the row stays locked until `atLeastMs` after it was taken (ShedLock's lockAtLeastFor). */
export async function unlock(db: SqlRunner, name: string, by: string, atLeastMs: number): Promise<void> {
  await db.query(
    `UPDATE ${SHEDLOCK_TABLE}
        SET lock_until = GREATEST(locked_at + $3 * interval '1 millisecond', ${NOW})
      WHERE name = $1 AND locked_by = $2`,
    [name, by, atLeastMs],
  );
}
