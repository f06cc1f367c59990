// A pg.Pool look-alike over an open PGlite, for code written against pg (the lease client,
// the fenced store, the PostgreSQL source) running in the embedded demo on the store's own
// PGlite. PGlite is one session (docs/architecture.md): every "connection" here is that
// session, so only single statements are safe through it (which is all that code sends);
// a transaction must use PGlite's own transaction(), which holds the session for its length.
// end() leaves the PGlite open: its owner closes it.
import type { PGlite } from '@electric-sql/pglite';
import type { PgPoolLike, PgResult } from './pg-like';

export function pglitePool(db: PGlite): PgPoolLike {
  let ended = false;
  const query = async <R,>(text: string, params?: unknown[]): Promise<PgResult<R>> => {
    if (ended) throw new Error('the pool has ended');
    if (params && params.length) {
      const result = await db.query<R>(text, params);
      return { rows: result.rows, rowCount: result.affectedRows || result.rows.length };
    }
    // Without parameters pg allows several statements in one text (simple protocol): so does exec.
    const results = await db.exec(text);
    const last = results.at(-1);
    return { rows: (last?.rows ?? []) as R[], rowCount: last ? last.affectedRows || last.rows.length : 0 };
  };
  return {
    query,
    async connect() {
      if (ended) throw new Error('the pool has ended');
      return { query, release: () => {} };
    },
    async end() {
      ended = true;
    },
    on: () => undefined,
  };
}
