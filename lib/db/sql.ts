// A minimal SQL session over either a pg connection or an embedded PGlite, for the code
// that must speak SQL directly (the migration runner, the drift check, tests): the same
// statements run on both, so what is tested on one holds on the other.
import type { PGlite, Transaction } from '@electric-sql/pglite';
import pg from 'pg';

export interface SqlSession {
  readonly kind: 'postgres' | 'pglite';
  /** One parameterised statement. Fails with the database's error. */
  query<Row = Record<string, unknown>>(text: string, params?: unknown[]): Promise<Row[]>;
  /** A script of several statements, no parameters. Fails at the first statement that fails. */
  exec(script: string): Promise<void>;
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: SqlSession) => Promise<T>): Promise<T>;
  /** Ends the connection (never closes a PGlite it was given). */
  close(): Promise<void>;
}

export type PostgresSessionOptions = {
  /** Give up connecting after this long. */
  connectTimeoutMs?: number;
  /** Server-side limit for each statement (0: none). */
  statementTimeoutMs?: number;
  applicationName?: string;
};

const ignore = () => {};

/** Opens one pg connection. Fails with the driver's error when the server cannot be reached in time. */
export async function connectPostgres(url: string, options: PostgresSessionOptions = {}): Promise<SqlSession> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
    statement_timeout: options.statementTimeoutMs ?? 0,
    application_name: options.applicationName ?? 'leasehold',
  });
  // An idle connection that dies (server restart) emits 'error'; without a listener that
  // would crash the process. The next query reports the failure instead.
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => {});
    throw error;
  }
  return postgresSession(client);
}

function postgresSession(client: pg.Client): SqlSession {
  const session: SqlSession = {
    kind: 'postgres',
    async query<Row>(text: string, params?: unknown[]) {
      return (await client.query(text, params)).rows as Row[];
    },
    async exec(script) {
      await client.query(script);
    },
    async transaction(work) {
      await client.query('BEGIN');
      try {
        const result = await work(session);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      }
    },
    async close() {
      await client.end();
    },
  };
  return session;
}

/**
 * Sessions from a pool, for code that writes often (the collector): `transaction` takes a
 * pooled connection for the whole transaction. Fails like connectPostgres.
 */
export function pooledPostgres(url: string, options: PostgresSessionOptions & { max?: number } = {}): SqlSession {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 2,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
    statement_timeout: options.statementTimeoutMs ?? 30_000,
    application_name: options.applicationName ?? 'leasehold',
  });
  pool.on('error', () => {});
  const session: SqlSession = {
    kind: 'postgres',
    async query<Row>(text: string, params?: unknown[]) {
      return (await pool.query(text, params)).rows as Row[];
    },
    async exec(script) {
      await pool.query(script);
    },
    async transaction(work) {
      const client = await pool.connect();
      // A checked-out connection that dies (the server restarted mid-transaction) emits 'error'
      // after failing its query; the pool listens only to idle ones, and with no listener the
      // process would crash. The failed query reports it.
      client.on('error', ignore);
      let broken = false;
      try {
        await client.query('BEGIN');
        const result = await work(postgresSession(client as unknown as pg.Client));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {
          broken = true;
        });
        throw error;
      } finally {
        client.removeListener('error', ignore);
        client.release(broken ? true : undefined);
      }
    },
    async close() {
      await pool.end();
    },
  };
  return session;
}

/** A session over an open PGlite. PGlite is one session: do not await other queries inside `transaction`. */
export function pgliteSession(db: PGlite | Transaction): SqlSession {
  return {
    kind: 'pglite',
    async query<Row>(text: string, params?: unknown[]) {
      return (await db.query<Row>(text, params)).rows;
    },
    async exec(script) {
      await db.exec(script);
    },
    async transaction(work) {
      if (!('transaction' in db)) throw new Error('nested transactions are not supported on PGlite');
      return db.transaction((tx) => work(pgliteSession(tx)));
    },
    async close() {},
  };
}
