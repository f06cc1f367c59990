// The embedded demo's one source, written as a person would write it in leasehold.config.json:
// the fleet's lease table (fleet.ts), in the embedded store's own database (`pglite://embedded`,
// lib/config/schema.ts). When the demo runs, lib/root hands this entry to lib/config, which registers it through the same
// schema as a file's sources; the registry and the collector then build and observe it as any
// other PostgreSQL source. No imports.

/** The demo fleet's lease table, in the embedded store. */
export const DEMO_LEASE_TABLE = 'pixly.leases';

export const DEMO_SOURCE_ENTRY = {
  name: 'demo',
  backend: 'postgres',
  url: 'pglite://embedded/demo',
  tables: [{ table: DEMO_LEASE_TABLE, format: 'leasehold' }],
  pollMs: 1_000,
} as const;
