// Fresh databases for tests: a new Postgres database per test file (dropped afterwards),
// or a new PGlite data directory. Nothing is shared between tests that could leak state.
import { cpSync, existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { openEmbedded, type EmbeddedDatabase } from '../../lib/db/embedded';
import { connectPostgres, pgliteSession, type SqlSession } from '../../lib/db/sql';
import { testServices } from './services';

export type TestDatabase = {
  kind: 'postgres' | 'pglite';
  /** A new session on the database (Postgres: a new connection; PGlite: the one session). */
  connect(): Promise<SqlSession>;
  /** The StoreConfig for openStore. */
  storeConfig(): { kind: 'postgres'; url: string } | { kind: 'pglite'; dataDir: string };
  /** For PGlite tests that need the directory closed before another opener. */
  release(): Promise<void>;
  drop(): Promise<void>;
};

export async function createPostgresDatabase(prefix = 'lh_test'): Promise<TestDatabase & { url: string }> {
  const admin = testServices().databaseUrl;
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  const session = await connectPostgres(admin);
  try {
    await session.exec(`CREATE DATABASE "${name}"`);
  } finally {
    await session.close();
  }
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    kind: 'postgres',
    url: url.toString(),
    connect: () => connectPostgres(url.toString()),
    storeConfig: () => ({ kind: 'postgres', url: url.toString() }),
    release: async () => {},
    async drop() {
      const s = await connectPostgres(admin);
      try {
        await s.exec(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await s.close();
      }
    },
  };
}

export function createPgliteDirectory(): { dataDir: string; remove(): void } {
  const parent = mkdtempSync(path.join(os.tmpdir(), 'leasehold-pglite-'));
  return { dataDir: path.join(parent, 'data'), remove: () => rmSync(parent, { recursive: true, force: true }) };
}

// A fresh PGlite directory costs an initdb (seconds); a copy of a cleanly closed empty one
// costs milliseconds. The template is made once per machine and PGlite version.
const PGLITE_TEMPLATE = path.join(os.tmpdir(), 'leasehold-pglite-template-v1');

async function pgliteTemplate(): Promise<string> {
  if (existsSync(path.join(PGLITE_TEMPLATE, 'PG_VERSION'))) return PGLITE_TEMPLATE;
  const building = createPgliteDirectory();
  const db = await openEmbedded(building.dataDir);
  await db.close();
  try {
    renameSync(building.dataDir, PGLITE_TEMPLATE);
  } catch {
    // Another test process made it first: use theirs.
  }
  building.remove();
  return PGLITE_TEMPLATE;
}

/** An empty, never-opened-by-anyone-else PGlite data directory. */
export async function freshPgliteDirectory(): Promise<{ dataDir: string; remove(): void }> {
  const dir = createPgliteDirectory();
  cpSync(await pgliteTemplate(), dir.dataDir, { recursive: true });
  return dir;
}

export async function createPgliteDatabase(): Promise<TestDatabase & { dataDir: string }> {
  const dir = await freshPgliteDirectory();
  let open: EmbeddedDatabase | undefined;
  return {
    kind: 'pglite',
    dataDir: dir.dataDir,
    async connect() {
      open ??= await openEmbedded(dir.dataDir);
      return pgliteSession(open.pglite);
    },
    storeConfig: () => ({ kind: 'pglite', dataDir: dir.dataDir }),
    async release() {
      await open?.close();
      open = undefined;
    },
    async drop() {
      await open?.close();
      open = undefined;
      dir.remove();
    },
  };
}

/** Both store kinds, for describe.each: every store test runs on Postgres and on PGlite. */
export const STORE_KINDS = [
  { kind: 'postgres' as const, create: () => createPostgresDatabase() },
  { kind: 'pglite' as const, create: () => createPgliteDatabase() },
];
