// The database the digest runs on, as lib/demo/digest.ts needs it: queries and transactions.
// The embedded demo runs it on the store's PGlite, the full-stack demo (scripts/demo.ts) on a
// real PostgreSQL through a pg pool: the same SQL either way.
import type { PGlite } from '@electric-sql/pglite';
import type pg from 'pg';

export type SqlRunner = {
  query<R>(text: string, params?: unknown[]): Promise<{ rows: R[] }>;
};

export type DigestSql = SqlRunner & {
  /** Several statements in one text, no parameters (the schema). */
  exec(text: string): Promise<void>;
  transaction<T>(work: (tx: SqlRunner & { exec(text: string): Promise<void> }) => Promise<T>): Promise<T>;
};

export function pgliteSql(db: PGlite): DigestSql {
  return {
    query: (text, params) => db.query(text, params),
    exec: async (text) => void (await db.exec(text)),
    transaction: (work) =>
      db.transaction((tx) =>
        work({
          query: (text, params) => tx.query(text, params),
          exec: async (text) => void (await tx.exec(text)),
        }),
      ),
  };
}

const ignore = () => {};

export function poolSql(pool: pg.Pool): DigestSql {
  return {
    query: async <R,>(text: string, params?: unknown[]) => ({ rows: (await pool.query(text, params)).rows as R[] }),
    exec: async (text) => void (await pool.query(text)),
    async transaction(work) {
      const client = await pool.connect();
      // A checked-out connection that dies emits 'error' after failing its query: not a crash.
      client.on('error', ignore);
      try {
        await client.query('BEGIN');
        const result = await work({
          query: async <R,>(text: string, params?: unknown[]) => ({ rows: (await client.query(text, params)).rows as R[] }),
          exec: async (text) => void (await client.query(text)),
        });
        await client.query('COMMIT');
        client.release();
        return result;
      } catch (error) {
        // A connection whose ROLLBACK fails is broken: it is destroyed, not given back.
        await client.query('ROLLBACK').then(
          () => client.release(),
          (rollbackError: Error) => client.release(rollbackError),
        );
        throw error;
      } finally {
        client.removeListener('error', ignore);
      }
    },
  };
}
