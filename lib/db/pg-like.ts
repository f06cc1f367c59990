// The part of pg's Pool that Leasehold's PostgreSQL code uses (lib/lease/postgres.ts,
// lib/lease/fenced-store.ts, lib/sources/postgres), so the same code can run over a real
// pg.Pool or over the embedded PGlite (lib/db/pglite-pool.ts: the embedded demo).
export type PgResult<R> = { rows: R[]; rowCount: number | null };

export type PgQueryable = {
  query<R = Record<string, unknown>>(text: string, params?: unknown[]): Promise<PgResult<R>>;
};

export type PgPoolClientLike = PgQueryable & { release(destroy?: boolean | Error): void };

export type PgPoolLike = PgQueryable & {
  connect(): Promise<PgPoolClientLike>;
  end(): Promise<void>;
  on(event: 'error', listener: (error: Error) => void): unknown;
};
