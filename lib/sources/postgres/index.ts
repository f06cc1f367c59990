// PostgreSQL source: lease tables (Leasehold's own layout and ShedLock's), and advisory
// locks from pg_locks. Read-only: it never writes to the observed database.
//
//   leasehold  leases(name, owner, expires_at, token)          -> key "<table>/<name>", fenced
//   shedlock   shedlock(name, lock_until, locked_at, locked_by) -> key "<table>/<name>", unfenced
//   advisory   pg_locks (locktype 'advisory') + pg_stat_activity -> key "advisory/<lock key>",
//              holder = the session holding it, waiters = ungranted requests in the order they began waiting
//
// Expiry and remaining time are computed by the database in the same query (now() on one
// clock), so no client clock is ever compared with the server's.
//
// Rows are hostile until judged, one by one: a name or owner of a megabyte is sent as its
// first characters, its length and its SHA-256 (computed by the database); an expiry of
// 'infinity' or 4000 BC, a token of 1.5 or 'abc' make that one row a lease in state
// `unknown` with its reason, never the whole read fail. A table that cannot be read (renamed,
// another layout, locked by another session for over a second) is reported as unread, and the source's other
// tables and its advisory locks are still read (SourceSnapshot.unread).
//
// Here: the source itself. The pool and the shared state: connection.ts; a snapshot part by
// part: snapshot.ts; lease tables: tables.ts (their SQL: table-query.ts); advisory locks:
// advisory.ts; what a failure costs (a part or the read): part-errors.ts; a poll that reads
// only the rows changed since the last read: delta.ts.
import type { PgPoolLike } from '../../db/pg-like';
import { silentLogger, type Logger } from '../../log';
import type { PostgresSourceConfig } from './config';
import type { LeaseSource, PollResult, SourceSnapshot } from '../types';
import { systemClock, type Clock } from '../../time/clock';
import { openPool, withClient } from './connection';
import { newDeltaState, pollChanges, type PostgresReadState } from './delta';
import { readKeysOf } from './read-keys';
import { readSnapshot } from './snapshot';

export { advisoryKey } from './advisory';
export { MAX_TOKEN_DIGITS } from './table-query';

/**
 * `pool`: read through this pool (the embedded store's PGlite, lib/db/pglite-pool.ts, for a url
 * of pglite://embedded) instead of config.url; close() leaves it open. `log`: its logger.
 */
export function createPostgresSource(config: PostgresSourceConfig, defaultPollMs: number, given?: PgPoolLike, log: Logger = silentLogger(), clock: Clock = systemClock): LeaseSource {
  const pool: PgPoolLike = given ?? openPool(config);
  // An idle connection that breaks is dropped by the pool; the next read opens another (a read that fails says so).
  pool.on('error', (error: unknown) => log.debug({ err: error }, 'an idle connection failed'));
  const state: PostgresReadState = { config, pool, layouts: new Map(), delta: newDeltaState(), clock };

  return {
    name: config.name,
    backend: 'postgres',
    pollMs: config.pollMs ?? defaultPollMs,

    async snapshot(signal): Promise<SourceSnapshot> {
      return withClient(state, (client) => readSnapshot(state, client), signal);
    },

    // What changed since the last read, or everything (delta.ts).
    async poll(signal): Promise<PollResult> {
      return withClient(state, async (client) => (await pollChanges(state, client, clock.mono())) ?? { kind: 'full', ...(await readSnapshot(state, client)) }, signal);
    },

    async readKeys(keys, signal) {
      return withClient(state, (client) => readKeysOf(state, client, keys), signal);
    },

    async close() {
      if (!given) await pool.end();
    },
  };
}
