// The store: Prisma Client over PostgreSQL (adapter-pg) when DATABASE_URL is set, over
// an embedded PGlite otherwise. Opening it applies pending migrations first.
import type { PGlite } from '@electric-sql/pglite';
import { PrismaClient } from '../generated/prisma/client';
import { openEmbedded, type EmbeddedDatabase } from './embedded';
import { migrate, migrationStatus, readMigrations, type Migration, type MigrationStatus } from './migrate';
import { connectPostgres, pgliteSession, pooledPostgres, type SqlSession } from './sql';
import { createOutboxSignal, type OutboxSignal } from './outbox-signal';

/** Where the store is: PostgreSQL (DATABASE_URL), or the embedded PGlite in a data directory. */
export type StoreConfig =
  | { kind: 'postgres'; url: string }
  | { kind: 'pglite'; dataDir: string };

export type StoreKind = StoreConfig['kind'];

export type Store = {
  kind: StoreKind;
  prisma: PrismaClient;
  /** The migrations this version ships, read once at open. */
  migrations: Migration[];
  /** Compares the database's `_prisma_migrations` with the shipped migrations. */
  migrationStatus(): Promise<MigrationStatus>;
  /** Runs `work` on a raw SQL session (a dedicated connection on Postgres, the one session on PGlite). */
  withSql<T>(work: (sql: SqlSession) => Promise<T>): Promise<T>;
  /**
   * Runs `work` in one transaction, for writers that batch SQL (the collector): a pooled
   * connection on Postgres, PGlite's one session otherwise. On PGlite nothing else may be
   * awaited on the store inside `work`: it would wait for this very transaction.
   */
  transaction<T>(work: (sql: SqlSession) => Promise<T>): Promise<T>;
  /**
   * Runs one statement as its own transaction, on the same pool: one round trip to the
   * server where `transaction` needs one for BEGIN and one for COMMIT besides (PGlite: in its
   * one session).
   */
  statement<Row>(text: string, params: unknown[]): Promise<Row[]>;
  /** The PostgreSQL URL of the store, for processes that share it (collector ownership leases); null when embedded. */
  url: string | null;
  /** The embedded database itself (the demo keeps its own tables in it); null on PostgreSQL. */
  pglite: PGlite | null;
  /** Wakes the delivery worker on this store object when the outbox changes (lib/db/outbox-signal.ts). */
  outbox: OutboxSignal;
  /** Disconnects Prisma, then closes PGlite (so its next open needs no recovery) and releases its lock. */
  close(): Promise<void>;
};

export type OpenStoreOptions = {
  /** Apply pending migrations before returning (default true). */
  migrate?: boolean;
  migrationsDir?: string;
  log?: (line: string) => void;
  signal?: AbortSignal;
};

/**
 * Opens the store described by config.
 * Fails with the driver's error when Postgres cannot be reached, StoreLockedError when
 * another process holds the embedded data directory, MigrationError when migrating fails.
 */
export async function openStore(config: StoreConfig, options: OpenStoreOptions = {}): Promise<Store> {
  const migrations = readMigrations(options.migrationsDir);
  const log = options.log ?? (() => {});
  if (config.kind === 'postgres') return openPostgresStore(config.url, migrations, options, log);
  return openPgliteStore(config.dataDir, migrations, options, log);
}

async function openPostgresStore(
  url: string,
  migrations: Migration[],
  options: OpenStoreOptions,
  log: (line: string) => void,
): Promise<Store> {
  const withSql = async <T>(work: (sql: SqlSession) => Promise<T>): Promise<T> => {
    const session = await connectPostgres(url, { applicationName: 'leasehold-store' });
    try {
      return await work(session);
    } finally {
      await session.close().catch(() => {});
    }
  };
  if (options.migrate !== false) {
    await withSql((sql) => migrate(sql, { migrations, log, signal: options.signal }));
  }
  const { PrismaPg } = await import('@prisma/adapter-pg');
  const prisma = new PrismaClient({
    adapter: new PrismaPg({ connectionString: url, connectionTimeoutMillis: 5_000, application_name: 'leasehold' }),
  });
  let writer: SqlSession | undefined;
  const writers = () => (writer ??= pooledPostgres(url, { applicationName: 'leasehold-writer', max: 10 }));
  return {
    kind: 'postgres',
    prisma,
    migrations,
    url,
    pglite: null,
    outbox: createOutboxSignal(),
    migrationStatus: () => withSql((sql) => migrationStatus(sql, migrations)),
    withSql,
    transaction: (work) => writers().transaction(work),
    statement: (text, params) => writers().query(text, params),
    async close() {
      await prisma.$disconnect();
      await writer?.close();
    },
  };
}

async function openPgliteStore(
  dataDir: string,
  migrations: Migration[],
  options: OpenStoreOptions,
  log: (line: string) => void,
): Promise<Store> {
  const embedded: EmbeddedDatabase = await openEmbedded(dataDir);
  try {
    const session = pgliteSession(embedded.pglite);
    if (options.migrate !== false) await migrate(session, { migrations, log, signal: options.signal });
    const { PrismaPGlite } = await import('pglite-prisma-adapter');
    const prisma = new PrismaClient({ adapter: new PrismaPGlite(embedded.pglite) });
    return {
      kind: 'pglite',
      prisma,
      migrations,
      url: null,
      pglite: embedded.pglite,
      outbox: createOutboxSignal(),
      migrationStatus: () => migrationStatus(session, migrations),
      withSql: (work) => work(session),
      transaction: (work) => session.transaction(work),
      statement: (text, params) => session.query(text, params),
      async close() {
        await prisma.$disconnect().catch(() => {});
        await embedded.close();
      },
    };
  } catch (error) {
    await embedded.close().catch(() => {});
    throw error;
  }
}

/**
 * A sentence when the store's PostgreSQL acknowledges commits before keeping them
 * (`synchronous_commit = off`): an abrupt stop then loses events and audit entries Leasehold
 * was told were written. Null when it keeps them, and on the embedded store.
 */
export async function durabilityWarning(store: Store): Promise<string | null> {
  if (store.kind !== 'postgres') return null;
  const [row] = await store.prisma.$queryRaw<{ synchronous_commit: string }[]>`SHOW synchronous_commit`;
  if (row?.synchronous_commit !== 'off') return null;
  return "the store's PostgreSQL runs with synchronous_commit = off: if its server stops abruptly, events and audit entries it acknowledged are lost. Turn it on for this database (ALTER DATABASE ... SET synchronous_commit = on) or the server.";
}
