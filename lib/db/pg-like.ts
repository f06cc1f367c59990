// The part of pg's Pool that Leasehold's PostgreSQL code uses (lib/lease/postgres.ts,
// lib/lease/fenced-store.ts, lib/sources/postgres), so the same code can run over a real
// pg.Pool or over the embedded PGlite (lib/db/pglite-pool.ts: the embedded demo). Owned by the
// lease library, which must stand alone (lib/lease/pg-pool.ts).
export type { PgPoolClientLike, PgPoolLike, PgQueryable, PgResult } from '../lease/pg-pool';
