// Leases in a PostgreSQL table, the seed's layout:
//
//   CREATE TABLE leases (name VARCHAR PRIMARY KEY, owner VARCHAR, expires_at TIMESTAMPTZ NOT NULL,
//                        token BIGINT NOT NULL DEFAULT 0)
//
// Expiry is judged by the database's clock (now()), never by a client's. The token is
// bumped on every grant and never on a renewal, and a released row is kept (owner NULL)
// rather than deleted, so the next grant continues the sequence instead of restarting it.
import pg from 'pg';
import { BackendUnavailableError, LeaseLostError } from './errors';
import { DEFAULT_CALL_TIMEOUT_MS, throwIfAborted, withDeadline } from './deadline';
import type { CallOptions, Grant, LeaseBackend, LeaseInfo } from './types';
import type { PgPoolLike } from './pg-pool';

export type PostgresLeaseOptions = {
  /** Where the lease table is: a connection URL, or a pool of one's own (`pool`). */
  url?: string;
  /** A pg.Pool (or look-alike, lib/db/pglite-pool.ts) to use instead of opening one; close() leaves it open. */
  pool?: PgPoolLike;
  /** The lease table, optionally schema-qualified ("leases", "app.leases"). Default "leases". */
  table?: string;
  /** Create the table when it does not exist (default true). An existing table is never altered. */
  ensureTable?: boolean;
  callTimeoutMs?: number;
  poolSize?: number;
};

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/;

/** "app.leases" -> "app"."leases"; each part quoted as given, so mixed case survives. */
export function quoteTable(table: string): string {
  const parts = table.split('.');
  if (parts.length > 2 || !parts.every((part) => IDENTIFIER.test(part))) {
    throw new Error(`"${table}" is not a table name: expected letters, digits and _, optionally schema.table`);
  }
  return parts.map((part) => `"${part}"`).join('.');
}

// pg error codes and driver messages that mean "the server did not answer", not "no".
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EPIPE', '57014', '57P01', '57P03', '08006', '08001', '08003']);

export function createPostgresBackend(options: PostgresLeaseOptions): LeaseBackend {
  const table = quoteTable(options.table ?? 'leases');
  const timeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  if (!options.pool && !options.url) throw new Error('a postgres lease backend needs a url or a pool');
  const own = !options.pool;
  const pool: PgPoolLike = options.pool ?? new pg.Pool({
    connectionString: options.url,
    max: options.poolSize ?? 4,
    connectionTimeoutMillis: timeoutMs,
    idleTimeoutMillis: 10_000,
    // The server stops a statement that runs past the deadline (a row lock held by
    // someone else, say), so a pooled connection is not stuck behind it for long.
    statement_timeout: timeoutMs,
    // ...and the client gives up on a reply that never comes (a partition swallows the
    // query): the connection is then discarded instead of staying checked out forever.
    query_timeout: timeoutMs + 500,
    application_name: 'leasehold-lease',
  });
  // A pooled connection that dies while idle emits 'error'; the next query reports it.
  pool.on('error', () => {});
  const db: LeaseTable = { pool, table, timeoutMs, ready: undefined, tableReady: options.ensureTable === false };

  return {
    kind: 'postgres',
    minTtlMs: 10,
    // Expiry is judged by one clock, the database's.
    driftAllowanceMs: () => 0,
    // Each method hands its arguments on as they are: no closure or object per call.
    tryAcquire: (key, holder, ttlMs, callOptions) => acquire(db, key, holder, ttlMs, callOptions),
    renew: (key, holder, grant, ttlMs, callOptions) => renew(db, key, holder, grant, ttlMs, callOptions),
    release: (key, holder, grant, callOptions) => release(db, key, holder, grant, callOptions),
    inspect: (key, callOptions) => inspect(db, key, callOptions),
    async close() {
      if (own) await pool.end();
    },
  } satisfies LeaseBackend;
}

/** What every call shares: the pool, the table, and whether the table is known to exist. */
type LeaseTable = {
  pool: PgPoolLike;
  /** Quoted (quoteTable). */
  table: string;
  timeoutMs: number;
  ready: Promise<void> | undefined;
  tableReady: boolean;
};

function ensureTable(db: LeaseTable): Promise<void> {
  db.ready ??= db.pool
    .query(
      `CREATE TABLE IF NOT EXISTS ${db.table} (
           name       VARCHAR(200) PRIMARY KEY,
           owner      VARCHAR(200),
           expires_at TIMESTAMPTZ NOT NULL,
           token      BIGINT NOT NULL DEFAULT 0)`,
    )
    .then(
      () => {
        db.tableReady = true;
      },
      (error: unknown) => {
        db.ready = undefined;
        // Two clients creating the same table at once: one loses the race on the catalog.
        if ((error as { code?: string }).code === '23505') return;
        throw error;
      },
    );
  return db.ready;
}

// The pool's connection and query timeouts are the deadline of each call; a caller's
// signal is raced. (No closures on the hot path: every lock pays this on every call.)
async function query<Row>(db: LeaseTable, what: string, text: string, params: unknown[], callOptions?: CallOptions): Promise<Row[]> {
  const signal = callOptions?.signal;
  throwIfAborted(signal);
  try {
    if (!db.tableReady) await ensureTable(db);
    const sent = db.pool.query(text, params);
    return (signal ? await withDeadline('postgres', what, db.timeoutMs, signal, () => sent) : await sent).rows as Row[];
  } catch (error) {
    throw translate(db.table, error, what);
  }
}

function translate(table: string, error: unknown, what: string): unknown {
  const code = (error as { code?: string }).code;
  const message = (error as Error).message ?? String(error);
  if ((code && UNAVAILABLE_CODES.has(code)) || /timeout|terminated|Connection ended/i.test(message)) {
    return new BackendUnavailableError('postgres', `${what}: ${code ?? message}`, { cause: error });
  }
  if (code === '42P01') {
    return new Error(`the lease table ${table} does not exist; create it (see lib/lease/postgres.ts) or pass ensureTable: true`, { cause: error });
  }
  return error;
}

async function acquire(db: LeaseTable, key: string, holder: string, ttlMs: number, callOptions?: CallOptions): Promise<Grant | null> {
  // 1. Insert the row, or take it over when it is free (released) or expired by the
  //    database's clock; either way the token goes up by one. A row held by someone
  //    else matches neither branch and returns nothing.
  const rows = await query<{ token: string }>(
    db,
    'acquire',
    `INSERT INTO ${db.table} AS l (name, owner, expires_at, token)
         VALUES ($1, $2, now() + $3 * interval '1 millisecond', 1)
         ON CONFLICT (name) DO UPDATE
            SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at, token = l.token + 1
          WHERE l.owner IS NULL OR l.expires_at <= now()
         RETURNING l.token::text AS token`,
    [key, holder, ttlMs],
    callOptions,
  );
  return rows[0] ? { token: BigInt(rows[0].token) } : null;
}

async function renew(db: LeaseTable, key: string, holder: string, grant: Grant, ttlMs: number, callOptions?: CallOptions): Promise<void> {
  // Only our grant (same owner and token) and only while it has not expired: a lease
  // that lapsed is lost even if nobody has taken it yet.
  const rows = await query(
    db,
    'renew',
    `UPDATE ${db.table} SET expires_at = now() + $4 * interval '1 millisecond'
          WHERE name = $1 AND owner = $2 AND token = $3 AND expires_at > now()
         RETURNING token`,
    [key, holder, grant.token.toString(), ttlMs],
    callOptions,
  );
  if (rows.length === 0) throw new LeaseLostError(key, 'expired, released or taken over (postgres row no longer matches)');
}

async function release(db: LeaseTable, key: string, holder: string, grant: Grant, callOptions?: CallOptions): Promise<boolean> {
  const rows = await query(
    db,
    'release',
    `UPDATE ${db.table} SET owner = NULL, expires_at = now()
          WHERE name = $1 AND owner = $2 AND token = $3 AND expires_at > now()
         RETURNING token`,
    [key, holder, grant.token.toString()],
    callOptions,
  );
  return rows.length > 0;
}

async function inspect(db: LeaseTable, key: string, callOptions?: CallOptions): Promise<LeaseInfo | null> {
  const rows = await query<{ owner: string | null; token: string; remaining_ms: number }>(
    db,
    'inspect',
    `SELECT owner, token::text AS token,
                (EXTRACT(EPOCH FROM (expires_at - now())) * 1000)::float8 AS remaining_ms
           FROM ${db.table} WHERE name = $1`,
    [key],
    callOptions,
  );
  const row = rows[0];
  if (!row || row.owner === null || row.remaining_ms <= 0) return null;
  return { key, holder: row.owner, token: BigInt(row.token), remainingMs: Math.round(row.remaining_ms) };
}
