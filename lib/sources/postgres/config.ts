// A PostgreSQL source's entry in the config file (docs/configuration.md).
import { z } from 'zod';
import { sourceEntry, urlWithScheme } from '../config-parts';

/**
 * A PostgreSQL source's url may name the embedded store's own database instead of a server:
 * `pglite://embedded`, optionally with a path that only labels it (`pglite://embedded/demo`).
 * It is read through the store's open PGlite (lib/sources/registry.ts), so only by a collector
 * on the embedded store (no DATABASE_URL). The embedded demo's source is one (lib/demo/source.ts).
 */
export function namesEmbeddedStore(url: string): boolean {
  return /^pglite:\/\/embedded(\/[A-Za-z0-9._-]*)?$/.test(url);
}

export const postgresSourceUrl = urlWithScheme(['postgres', 'postgresql'], 'a postgres:// or postgresql:// URL', namesEmbeddedStore);

// A table name as Postgres would accept it unquoted, optionally schema-qualified.
const tableName = z
  .string({ error: 'expected a table name' })
  .regex(/^([A-Za-z_][A-Za-z0-9_$]{0,62}\.)?[A-Za-z_][A-Za-z0-9_$]{0,62}$/, {
    error: 'expected a table name such as "leases" or "app.leases"',
  });

export const postgresSource = sourceEntry('postgres', {
  url: postgresSourceUrl,
  tables: z
    .array(
      z.strictObject({
        table: tableName,
        format: z.enum(['leasehold', 'shedlock']),
      }),
    )
    .default([]),
  advisoryLocks: z.boolean().default(false),
});

export type PostgresSourceConfig = z.output<typeof postgresSource>;
