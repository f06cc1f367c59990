// A pooled connection that dies while checked out (the server restarted mid-transaction, or an
// administrator's pg_terminate_backend) makes pg emit 'error' on it after failing its query.
// The pool listens only to idle connections: without a listener of ours the process crashed
// with "Connection terminated unexpectedly" (found by the chaos suite, restarting the store's
// server). Each place that checks a connection out must fail the work, not the process.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pooledPostgres } from '../../lib/db/sql';
import { openPool, withClient, type PostgresSourceState } from '../../lib/sources/postgres/connection';
import { createPostgresDatabase, type TestDatabase } from '../support/databases';

let db: TestDatabase & { url: string };
beforeAll(async () => {
  db = await createPostgresDatabase('lh_checkout');
});
afterAll(() => db.drop());

const killOwnBackend = 'SELECT pg_terminate_backend(pg_backend_pid())';

describe('a checked-out connection that dies', () => {
  it("fails the store's transaction, not the process", async () => {
    const session = pooledPostgres(db.url);
    try {
      await expect(session.transaction((sql) => sql.query(killOwnBackend))).rejects.toThrow(/terminat/i);
      // The pool goes on with a new connection.
      expect(await session.query<{ one: number }>('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    } finally {
      await session.close();
    }
  });

  it("fails a source's read, not the process", async () => {
    const config = { name: 'pg', backend: 'postgres', url: db.url, tables: [], advisoryLocks: false } as unknown as Parameters<typeof openPool>[0];
    const pool = openPool(config);
    try {
      const state = { pool, config } as unknown as PostgresSourceState;
      await expect(withClient(state, (client) => client.query(killOwnBackend), AbortSignal.timeout(5_000))).rejects.toThrow(/terminat/i);
    } finally {
      await pool.end();
    }
  });
});
