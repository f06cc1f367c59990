// Pixly's weekly digest (the seed's story), as the demo fleet runs it, in the embedded
// database next to Leasehold's own tables. The seed's "best" design:
//   - one scheduler, elected with a lease, enqueues one send-digest job per user per week;
//   - workers take jobs from the queue (a job whose worker died is taken again later: the
//     queue delivers at least once);
//   - a worker records pixly.digest_sent (user_id, week) under a unique constraint in the same
//     transaction as queuing the email (pixly.digest_outbox), so a redelivered job does nothing;
//   - the scheduler's writes carry its fencing token (lib/lease's fenced store), so a
//     scheduler that was paused past its lease cannot write over its successor.
// pixly.digest_outbox is what users receive: a (user, week) in it twice is a duplicate email.
// The tables live in their own schema, pixly: the application's, not Leasehold's (the store's
// tables are in public, and its drift check looks there only). The embedded demo keeps them in
// the store's PGlite, the full-stack demo in a PostgreSQL database of its own (lib/demo/sql.ts).
import type { DigestSql } from './sql';

/** Weeks kept in the tables (older ones are dropped as a new week starts). */
const KEEP_WEEKS = 3;

export const SCHEMA = `
  CREATE SCHEMA IF NOT EXISTS pixly;
  CREATE TABLE IF NOT EXISTS pixly.leases (
    name       VARCHAR(200) PRIMARY KEY,
    owner      VARCHAR(200),
    expires_at TIMESTAMPTZ NOT NULL,
    token      BIGINT NOT NULL DEFAULT 0);
  CREATE TABLE IF NOT EXISTS pixly.digest_users (id INT PRIMARY KEY, email TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS pixly.digest_weeks (
    week         INT PRIMARY KEY,
    started_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    enqueued_at  TIMESTAMPTZ,
    completed_at TIMESTAMPTZ);
  CREATE TABLE IF NOT EXISTS pixly.digest_jobs (
    user_id     INT NOT NULL,
    week        INT NOT NULL,
    done        BOOLEAN NOT NULL DEFAULT false,
    taken_by    TEXT,
    taken_until TIMESTAMPTZ,
    deliveries  INT NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, week));
  CREATE INDEX IF NOT EXISTS digest_jobs_open ON pixly.digest_jobs (week, user_id) WHERE NOT done;
  CREATE TABLE IF NOT EXISTS pixly.digest_sent (
    user_id INT NOT NULL,
    week    INT NOT NULL,
    sent_by TEXT NOT NULL,
    sent_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, week));
  CREATE TABLE IF NOT EXISTS pixly.digest_outbox (
    id      BIGSERIAL PRIMARY KEY,
    user_id INT NOT NULL,
    week    INT NOT NULL,
    sent_by TEXT NOT NULL,
    at      TIMESTAMPTZ NOT NULL DEFAULT now());
  CREATE INDEX IF NOT EXISTS digest_outbox_week ON pixly.digest_outbox (week, user_id);
  CREATE TABLE IF NOT EXISTS pixly.digest_counters (
    week  INT NOT NULL,
    name  TEXT NOT NULL,
    value BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (week, name));
`;

export async function setUp(db: DigestSql, users: number) {
  await db.exec(SCHEMA);
  const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM pixly.digest_users');
  if (rows[0]!.n < users) {
    await db.query(
      `INSERT INTO pixly.digest_users (id, email) SELECT i, 'user' || i || '@pixly.example' FROM generate_series(1, $1::int) AS i ON CONFLICT DO NOTHING`,
      [users],
    );
  }
}

export async function count(db: DigestSql, week: number, name: 'redeliveries_absorbed' | 'stale_writes_rejected') {
  await db.query(
    `INSERT INTO pixly.digest_counters AS c (week, name, value) VALUES ($1, $2, 1) ON CONFLICT (week, name) DO UPDATE SET value = c.value + 1`,
    [week, name],
  );
}

/** The week the scheduler works on: the newest one, or week 1. */
export async function currentWeek(db: DigestSql): Promise<{ week: number; enqueued: boolean; completed: boolean; completedAt: Date | null }> {
  const { rows } = await db.query<{ week: number; enqueued_at: Date | null; completed_at: Date | null }>(
    'SELECT week, enqueued_at, completed_at FROM pixly.digest_weeks ORDER BY week DESC LIMIT 1',
  );
  const row = rows[0];
  if (!row) return { week: 1, enqueued: false, completed: false, completedAt: null };
  return { week: row.week, enqueued: row.enqueued_at !== null, completed: row.completed_at !== null, completedAt: row.completed_at };
}

/** One job per user for `week` (idempotent), and the week marked enqueued. */
export async function enqueueWeek(db: DigestSql, week: number) {
  await db.transaction(async (tx) => {
    await tx.query('INSERT INTO pixly.digest_weeks (week) VALUES ($1) ON CONFLICT DO NOTHING', [week]);
    await tx.query('INSERT INTO pixly.digest_jobs (user_id, week) SELECT id, $1 FROM pixly.digest_users ON CONFLICT DO NOTHING', [week]);
    await tx.query('UPDATE pixly.digest_weeks SET enqueued_at = now() WHERE week = $1 AND enqueued_at IS NULL', [week]);
  });
}

/** True when every user has this week's digest; marks the week completed then. */
export async function completeIfDone(db: DigestSql, week: number): Promise<boolean> {
  const { rows } = await db.query<{ open: number }>('SELECT count(*)::int AS open FROM pixly.digest_jobs WHERE week = $1 AND NOT done', [week]);
  if (rows[0]!.open > 0) return false;
  await db.query('UPDATE pixly.digest_weeks SET completed_at = now() WHERE week = $1 AND completed_at IS NULL', [week]);
  return true;
}

/** Starts the next week, dropping weeks older than KEEP_WEEKS. */
export async function startWeek(db: DigestSql, week: number) {
  await db.transaction(async (tx) => {
    await tx.query('INSERT INTO pixly.digest_weeks (week) VALUES ($1) ON CONFLICT DO NOTHING', [week]);
    for (const table of ['pixly.digest_jobs', 'pixly.digest_sent', 'pixly.digest_outbox']) {
      await tx.query(`DELETE FROM ${table} WHERE week <= $1`, [week - KEEP_WEEKS]);
    }
    // The fenced store's log of accepted writes (one a second from the scheduler): the last hour.
    await tx.exec(`DO $$ BEGIN
                     IF to_regclass('pixly.digest_fence_log') IS NOT NULL THEN
                       DELETE FROM pixly.digest_fence_log WHERE at < now() - interval '1 hour';
                     END IF;
                   END $$`);
  });
}

export type Job = { userId: number; week: number; deliveries: number };

/** Takes up to `limit` open jobs no one else has (or whose worker has gone quiet for `visibilityMs`). */
export async function takeJobs(db: DigestSql, worker: string, limit: number, visibilityMs: number): Promise<Job[]> {
  const { rows } = await db.query<{ user_id: number; week: number; deliveries: number }>(
    `UPDATE pixly.digest_jobs j SET taken_by = $1, taken_until = now() + $3 * interval '1 millisecond', deliveries = j.deliveries + 1
      WHERE (j.user_id, j.week) IN (
              SELECT user_id, week FROM pixly.digest_jobs
               WHERE NOT done AND (taken_until IS NULL OR taken_until < now())
               ORDER BY week, user_id LIMIT $2)
      RETURNING j.user_id, j.week, j.deliveries`,
    [worker, limit, visibilityMs],
  );
  return rows.map((row) => ({ userId: row.user_id, week: row.week, deliveries: row.deliveries }));
}

/**
 * Sends one digest: pixly.digest_sent and the email in one transaction. A job delivered before
 * (its worker crashed, or its acknowledgement was lost) finds pixly.digest_sent already there and
 * sends nothing: 'absorbed'. `ack` false loses the acknowledgement (the job stays open and
 * the queue delivers it again later), as a real queue sometimes does.
 */
export async function send(db: DigestSql, worker: string, job: Job, ack: boolean): Promise<'sent' | 'absorbed'> {
  return db.transaction(async (tx) => {
    const inserted = await tx.query('INSERT INTO pixly.digest_sent (user_id, week, sent_by) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING user_id', [
      job.userId,
      job.week,
      worker,
    ]);
    const sent = inserted.rows.length > 0;
    if (sent) await tx.query('INSERT INTO pixly.digest_outbox (user_id, week, sent_by) VALUES ($1, $2, $3)', [job.userId, job.week, worker]);
    else {
      await tx.query(
        `INSERT INTO pixly.digest_counters AS c (week, name, value) VALUES ($1, 'redeliveries_absorbed', 1)
         ON CONFLICT (week, name) DO UPDATE SET value = c.value + 1`,
        [job.week],
      );
    }
    if (ack) await tx.query('UPDATE pixly.digest_jobs SET done = true, taken_by = NULL, taken_until = NULL WHERE user_id = $1 AND week = $2', [job.userId, job.week]);
    return sent ? 'sent' : 'absorbed';
  });
}

export type DigestStats = {
  users: number;
  week: number;
  /** Digests recorded sent this week (pixly.digest_sent). */
  sentThisWeek: number;
  /** Emails users received this week (pixly.digest_outbox). */
  deliveredThisWeek: number;
  weekStartedAt: string | null;
  weekCompletedAt: string | null;
  weeksCompleted: number;
  redeliveriesAbsorbed: { week: number; total: number };
  staleWritesRejected: { week: number; total: number };
  /** Emails sent twice to the same user for the same week, over the weeks kept: must stay 0. */
  duplicatesDelivered: number;
};

export async function stats(db: DigestSql): Promise<DigestStats> {
  const { rows } = await db.query<{
    users: number;
    week: number | null;
    started_at: Date | null;
    completed_at: Date | null;
    weeks_completed: number;
    sent: number;
    delivered: number;
    duplicates: number;
    absorbed_week: number;
    absorbed_total: number;
    stale_week: number;
    stale_total: number;
  }>(
    `WITH w AS (SELECT week, started_at, completed_at FROM pixly.digest_weeks ORDER BY week DESC LIMIT 1)
     SELECT (SELECT count(*)::int FROM pixly.digest_users) AS users,
            (SELECT week FROM w) AS week, (SELECT started_at FROM w) AS started_at, (SELECT completed_at FROM w) AS completed_at,
            (SELECT count(*)::int FROM pixly.digest_weeks WHERE completed_at IS NOT NULL) AS weeks_completed,
            (SELECT count(*)::int FROM pixly.digest_sent WHERE week = (SELECT week FROM w)) AS sent,
            (SELECT count(*)::int FROM pixly.digest_outbox WHERE week = (SELECT week FROM w)) AS delivered,
            (SELECT (count(*) - count(DISTINCT (user_id, week)))::int FROM pixly.digest_outbox) AS duplicates,
            (SELECT coalesce(sum(value), 0)::int FROM pixly.digest_counters WHERE name = 'redeliveries_absorbed' AND week = (SELECT week FROM w)) AS absorbed_week,
            (SELECT coalesce(sum(value), 0)::int FROM pixly.digest_counters WHERE name = 'redeliveries_absorbed') AS absorbed_total,
            (SELECT coalesce(sum(value), 0)::int FROM pixly.digest_counters WHERE name = 'stale_writes_rejected' AND week = (SELECT week FROM w)) AS stale_week,
            (SELECT coalesce(sum(value), 0)::int FROM pixly.digest_counters WHERE name = 'stale_writes_rejected') AS stale_total`,
  );
  const row = rows[0]!;
  return {
    users: row.users,
    week: row.week ?? 1,
    sentThisWeek: row.sent,
    deliveredThisWeek: row.delivered,
    weekStartedAt: row.started_at?.toISOString() ?? null,
    weekCompletedAt: row.completed_at?.toISOString() ?? null,
    weeksCompleted: row.weeks_completed,
    redeliveriesAbsorbed: { week: row.absorbed_week, total: row.absorbed_total },
    staleWritesRejected: { week: row.stale_week, total: row.stale_total },
    duplicatesDelivered: row.duplicates,
  };
}
