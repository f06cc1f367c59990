// PostgreSQL as a backend kind (lib/sources/backend.ts): lease tables, ShedLock tables and
// advisory locks, read by this folder's adapter and acted on by its force.ts.
import type { PgPoolLike } from '../../db/pg-like';
import { exactOf } from '../exact';
import { describeBackend, type BackendContext, type CanaryTarget } from '../backend';
import type { CanaryEntry } from '../config-parts';
import { ForceNotPossibleError } from '../force';
import { createPostgresForce } from './force';
import { createPostgresSource } from './index';
import { namesEmbeddedStore, postgresSource, type PostgresSourceConfig } from './config';
import { cell, isObject, textOf } from '../status-panel';

const NO_EMBEDDED_STORE = 'the embedded store is not open in this process (pglite://embedded is read only by a collector on the embedded store)';
/** The pool of a source that names the embedded store where none is open: every connection is refused. */
const noEmbeddedStore: PgPoolLike = {
  query: () => Promise.reject(new Error(NO_EMBEDDED_STORE)),
  connect: () => Promise.reject(new Error(NO_EMBEDDED_STORE)),
  end: async () => {},
  on: () => undefined,
};

/** A row of the source's first table in Leasehold's layout (named "<table>/<key>" by its reads); never a table of its own. */
function postgresCanary(config: PostgresSourceConfig, canary: CanaryEntry, { embedded }: Pick<BackendContext, 'embedded'>): CanaryTarget {
  const table = config.tables.find((t) => t.format === 'leasehold')?.table;
  if (!table) return { problem: 'a PostgreSQL canary needs a table with format "leasehold" in the source\'s tables: it is held as a row of the first one' };
  const observedKey = `${table}/${exactOf(canary.key)}`;
  if (!namesEmbeddedStore(config.url)) return { client: { backend: 'postgres', url: config.url, table, ensureTable: false, poolSize: 1 }, observedKey };
  if (!embedded) return { problem: "the embedded store is not open in this process" };
  return { client: { backend: 'postgres', pool: embedded, table, ensureTable: false }, observedKey };
}

export const postgresBackend = describeBackend<PostgresSourceConfig>({
  kind: 'postgres',
  title: 'PostgreSQL',
  configSchema: postgresSource,
  checkInConfig: (config, store) =>
    !store.embedded && namesEmbeddedStore(config.url)
      ? { field: 'url', problem: `expected a postgres:// or postgresql:// URL (pglite://embedded is the embedded store's database, and DATABASE_URL puts the store on PostgreSQL), found "${config.url}"` }
      : null,
  createSource: (config, { defaultPollMs, embedded, log, clock }) => createPostgresSource(config, defaultPollMs, namesEmbeddedStore(config.url) ? (embedded ?? noEmbeddedStore) : undefined, log, clock),
  createForce(config, { embedded }) {
    if (!namesEmbeddedStore(config.url)) return createPostgresForce(config);
    if (!embedded) throw new ForceNotPossibleError('not_supported', `source ${config.name} is the embedded store's database, which is not open in this process`);
    return createPostgresForce(config, embedded);
  },
  endpoints: (config) => [config.url],
  canary: postgresCanary,
  // The source reports { serverVersion } (snapshot.ts).
  panel: (detail) => (isObject(detail) && 'serverVersion' in detail ? { title: null, note: null, facts: [{ label: 'Server version', value: cell(textOf(detail.serverVersion)) }], table: null } : null),
});
