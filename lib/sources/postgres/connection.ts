// How a PostgreSQL source reaches its database: its own pool (one connection, every
// statement with a deadline) or the one it was given, one client per read, discarded after
// a failure; and the state its reads share.
import type { PgPoolClientLike, PgPoolLike } from '../../db/pg-like';
import pg from 'pg';
import type { PostgresSourceConfig } from './config';
import { SourceUnavailableError } from '../errors';
import { unavailable } from './part-errors';

const READ_TIMEOUT_MS = 5_000;
const LOCK_TIMEOUT_MS = 1_000;

export type PostgresSourceState = {
  config: PostgresSourceConfig;
  pool: PgPoolLike;
  // Each table's layout is checked once (and again after any failure): the columns it must
  // have, and which timestamps carry no time zone.
  layouts: Map<string, Set<string>>;
};

/** The source's own pool, on config.url. */
export function openPool(config: PostgresSourceConfig): PgPoolLike {
  return new pg.Pool({
    connectionString: config.url,
    max: 1,
    connectionTimeoutMillis: READ_TIMEOUT_MS,
    statement_timeout: READ_TIMEOUT_MS,
    query_timeout: READ_TIMEOUT_MS + 500,
    // A lease table is read with an ACCESS SHARE lock: waiting a second for it means something
    // holds it exclusively (a migration, a VACUUM FULL). That table is then unread (55P03), and
    // the source's other parts are read within the read's deadline instead of all timing out.
    lock_timeout: LOCK_TIMEOUT_MS,
    idleTimeoutMillis: 30_000,
    application_name: 'leasehold-observer',
  });
}

const ignore = () => {};

export async function withClient<T>(state: PostgresSourceState, work: (client: PgPoolClientLike) => Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) throw new SourceUnavailableError(state.config.name, 'the read was cancelled');
  let client: PgPoolClientLike;
  try {
    client = await state.pool.connect();
  } catch (error) {
    throw unavailable(state.config.name, error, 'connecting');
  }
  // A checked-out connection that dies (the server restarted) emits 'error' after failing its
  // query; with no listener that would crash the collector. The failed query reports it.
  client.on?.('error', ignore);
  let succeeded = false;
  try {
    const result = await work(client);
    succeeded = true;
    return result;
  } finally {
    // A failed read may have left the connection in any state: discard it.
    client.removeListener?.('error', ignore);
    client.release(succeeded ? undefined : true);
  }
}
