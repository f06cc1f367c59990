// A resource that checks fencing tokens (the seed's "storage with fencing"), in PostgreSQL.
//
// It remembers the highest token it accepted for each resource and rejects a write that
// carries a lower one, in one atomic statement. Every accepted write is also appended to a
// log, so a checker can read the whole history back.
//
//   const store = createFencedStore({ url, table: 'fenced' })
//   await store.write('digest:2026-W49', lease.token, 'sent') // 'accepted' | 'rejected'
import pg from 'pg';
import { quoteTable } from './postgres';
import { DEFAULT_CALL_TIMEOUT_MS, withDeadline } from './deadline';
import { BackendUnavailableError } from './errors';
import type { PgPoolLike } from './pg-pool';

export type FencedStoreOptions = {
  /** Where the tables are: a connection URL, or a pool of one's own (`pool`). */
  url?: string;
  /** A pg.Pool (or look-alike, lib/db/pglite-pool.ts) to use instead of opening one; close() leaves it open. */
  pool?: PgPoolLike;
  /** Base name of the two tables: <table> (highest token per resource) and <table>_log (accepted writes). */
  table?: string;
  /**
   * false makes a store that accepts every write whatever its token: the unfenced storage of
   * the seed's demonstration, used to show that the history checker catches what fencing prevents.
   */
  checkTokens?: boolean;
  callTimeoutMs?: number;
};

export type WriteResult = 'accepted' | 'rejected';
export type LoggedWrite = { resource: string; seq: number; token: bigint; value: string; at: Date };

export type FencedStore = {
  /** Accepted when `token` is at least the highest accepted so far for `resource`; rejected otherwise. */
  write(resource: string, token: bigint, value: string, options?: { signal?: AbortSignal }): Promise<WriteResult>;
  /** The highest accepted token of `resource`, or null when nothing was written. */
  highestToken(resource: string): Promise<bigint | null>;
  /** Every accepted write of `resource`, in the order it was accepted. */
  log(resource: string): Promise<LoggedWrite[]>;
  close(): Promise<void>;
};

export function createFencedStore(options: FencedStoreOptions): FencedStore {
  const base = options.table ?? 'fenced_resources';
  const table = quoteTable(base);
  const logTable = quoteTable(`${base}_log`);
  const timeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  const checkTokens = options.checkTokens !== false;
  if (!options.pool && !options.url) throw new Error('a fenced store needs a url or a pool');
  const own = !options.pool;
  const pool: PgPoolLike = options.pool ?? new pg.Pool({
    connectionString: options.url,
    max: 4,
    connectionTimeoutMillis: timeoutMs,
    statement_timeout: timeoutMs,
    query_timeout: timeoutMs + 500,
  });
  pool.on('error', () => {});

  let ready: Promise<void> | undefined;
  const ensureTables = () =>
    (ready ??= pool
      .query(
        `CREATE TABLE IF NOT EXISTS ${table} (resource TEXT PRIMARY KEY, token BIGINT NOT NULL, seq BIGINT NOT NULL, value TEXT NOT NULL);
         CREATE TABLE IF NOT EXISTS ${logTable} (resource TEXT NOT NULL, seq BIGINT NOT NULL, token BIGINT NOT NULL, value TEXT NOT NULL,
                                                 at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(), PRIMARY KEY (resource, seq))`,
      )
      .then(() => undefined, (error: unknown) => {
        ready = undefined;
        if ((error as { code?: string }).code !== '23505') throw error;
      }));

  const run = <T>(what: string, signal: AbortSignal | undefined, work: () => Promise<T>) =>
    withDeadline('postgres', what, timeoutMs, signal, async () => {
      try {
        await ensureTables();
        return await work();
      } catch (error) {
        const code = (error as { code?: string }).code ?? '';
        if (/^(ECONN|ETIMEDOUT|57|08)/.test(code)) throw new BackendUnavailableError('postgres', `${what}: ${code}`, { cause: error });
        throw error;
      }
    });

  return {
    write(resource, token, value, callOptions) {
      return run('fenced write', callOptions?.signal, async () => {
        // One statement: the check on the highest token, the new highest token and the log
        // entry happen atomically, so two writers can never both pass the same check.
        const { rows } = await pool.query(
          `WITH accepted AS (
             INSERT INTO ${table} AS r (resource, token, seq, value) VALUES ($1, $2, 1, $3)
             ON CONFLICT (resource) DO UPDATE
                SET token = GREATEST(r.token, EXCLUDED.token), seq = r.seq + 1, value = EXCLUDED.value
              WHERE ${checkTokens ? 'r.token <= EXCLUDED.token' : 'true'}
             RETURNING r.seq)
           INSERT INTO ${logTable} (resource, seq, token, value) SELECT $1, seq, $2, $3 FROM accepted RETURNING seq`,
          [resource, token.toString(), value],
        );
        return rows.length > 0 ? 'accepted' : 'rejected';
      });
    },
    highestToken(resource) {
      return run('read', undefined, async () => {
        const { rows } = await pool.query<{ token: string }>(`SELECT token::text AS token FROM ${table} WHERE resource = $1`, [resource]);
        return rows[0] ? BigInt(rows[0].token) : null;
      });
    },
    log(resource) {
      return run('read log', undefined, async () => {
        const { rows } = await pool.query<{ resource: string; seq: number; token: string; value: string; at: Date }>(
          `SELECT resource, seq::int AS seq, token::text AS token, value, at FROM ${logTable} WHERE resource = $1 ORDER BY seq`,
          [resource],
        );
        return rows.map((row) => ({ resource: row.resource, seq: row.seq, token: BigInt(row.token), value: row.value, at: row.at }));
      });
    },
    async close() {
      if (own) await pool.end();
    },
  };
}
