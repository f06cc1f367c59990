// Opening the store: the embedded store's one-process rule, a clean close, and a
// PostgreSQL that cannot be reached failing fast with a sentence instead of hanging.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreLockedError, lockFileOf } from '../../lib/db/embedded';
import { durabilityWarning, openStore } from '../../lib/db/store';
import { toPublicError } from '../../lib/errors';
import { createPostgresDatabase, freshPgliteDirectory } from '../support/databases';
import { run } from '../support/run';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function freshDir() {
  const dir = await freshPgliteDirectory();
  cleanups.push(() => dir.remove());
  return dir.dataDir;
}

describe('the embedded store', () => {
  it('writes a lock file with its pid, and removes it on close', async () => {
    const dataDir = await freshDir();
    const store = await openStore({ kind: 'pglite', dataDir });
    expect(readFileSync(lockFileOf(dataDir), 'utf8').split('\n')[0]).toBe(String(process.pid));
    await store.close();
    expect(existsSync(lockFileOf(dataDir))).toBe(false);
  });

  it('refuses a second open in the same process', async () => {
    const dataDir = await freshDir();
    const store = await openStore({ kind: 'pglite', dataDir });
    cleanups.push(() => store.close());
    await expect(openStore({ kind: 'pglite', dataDir })).rejects.toBeInstanceOf(StoreLockedError);
  });

  it('refuses another process, naming the pid that holds it', async () => {
    const dataDir = await freshDir();
    const store = await openStore({ kind: 'pglite', dataDir });
    cleanups.push(() => store.close());
    const other = await run(process.execPath, ['--import', 'tsx', 'bin/leasehold.ts', 'migrate', 'status'], {
      env: { LEASEHOLD_DATA_DIR: dataDir, DATABASE_URL: undefined, LEASEHOLD_CONFIG: undefined },
    });
    expect(other.code).toBe(1);
    expect(other.stderr).toContain(`is open in another process (pid ${process.pid})`);
    expect(other.stderr).not.toMatch(/^\s+at /m);
  });

  it('takes over a lock left by a process that died', async () => {
    const dataDir = await freshDir();
    // A pid that cannot be running: the kernel's pid_max is far below this.
    writeFileSync(lockFileOf(dataDir), '99999999\n2026-01-01T00:00:00.000Z\nkilled\n');
    const store = await openStore({ kind: 'pglite', dataDir });
    expect(readFileSync(lockFileOf(dataDir), 'utf8').split('\n')[0]).toBe(String(process.pid));
    await store.close();
  });

  it('keeps its data across a close and reopen', async () => {
    const dataDir = await freshDir();
    const first = await openStore({ kind: 'pglite', dataDir });
    await first.prisma.source.create({ data: { name: 'kept', backend: 'redis' } });
    await first.close();
    const second = await openStore({ kind: 'pglite', dataDir });
    cleanups.push(() => second.close());
    expect(await second.prisma.source.findMany({ select: { name: true } })).toEqual([{ name: 'kept' }]);
    expect((await second.migrationStatus()).pending).toEqual([]);
  });
});

describe('a PostgreSQL store that cannot be reached', () => {
  it('fails within its deadline, and the person sees no connection string', async () => {
    const started = Date.now();
    const error = await openStore({ kind: 'postgres', url: 'postgres://app:hunter2@127.0.0.1:1/app' }).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(10_000);
    const shown = toPublicError(error, () => {});
    expect(shown).toEqual({ status: 503, error: 'store_unavailable', message: 'The store cannot be reached (connection refused).' });
  });
});

describe("a PostgreSQL store's durability", () => {
  it('warns when the store acknowledges commits before keeping them (synchronous_commit = off), and not otherwise', async () => {
    const db = await createPostgresDatabase('lh_durability');
    cleanups.push(() => db.drop());
    const durable = await openStore({ kind: 'postgres', url: db.url });
    expect(await durabilityWarning(durable)).toBeNull();
    await durable.prisma.$executeRawUnsafe(`ALTER DATABASE "${new URL(db.url).pathname.slice(1)}" SET synchronous_commit = off`);
    await durable.close();
    const store = await openStore({ kind: 'postgres', url: db.url });
    cleanups.push(() => store.close());
    expect(await durabilityWarning(store)).toMatch(/synchronous_commit = off: .*lost/);
  });

  it('says nothing of the embedded store', async () => {
    const store = await openStore({ kind: 'pglite', dataDir: await freshDir() });
    cleanups.push(() => store.close());
    expect(await durabilityWarning(store)).toBeNull();
  });
});
