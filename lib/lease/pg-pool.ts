// What the lease library needs of a PostgreSQL pool: the part of pg's Pool it uses. A
// `pg.Pool` is one; so is anything with the same methods (Leasehold's embedded PGlite pool,
// lib/db/pglite-pool.ts). Defined here so that lib/lease imports nothing else of Leasehold
// and can be copied or published on its own; lib/db/pg-like.ts takes it from here.
export type PgResult<R> = { rows: R[]; rowCount: number | null };

export type PgQueryable = {
  query<R = Record<string, unknown>>(text: string, params?: unknown[]): Promise<PgResult<R>>;
};

export type PgPoolClientLike = PgQueryable & {
  release(destroy?: boolean | Error): void;
  /** pg's client: a connection that dies while checked out emits 'error' (PGlite's has none). */
  on?(event: 'error', listener: (error: Error) => void): unknown;
  removeListener?(event: 'error', listener: (error: Error) => void): unknown;
};

export type PgPoolLike = PgQueryable & {
  connect(): Promise<PgPoolClientLike>;
  end(): Promise<void>;
  on(event: 'error', listener: (error: Error) => void): unknown;
};
