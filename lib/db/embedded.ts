// The embedded store: PGlite (WASM Postgres) in this process, data in a directory.
//
// PGlite has no multi-process lock of its own: a second process opening the same
// directory silently diverges from the first. So we keep a lock file beside the data
// directory holding the pid of the process that has it open, and refuse to open a
// directory another live process holds.
import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { logger } from '../log';
import { processAlive } from './process-alive';
import { fillFromTemplate, isDataDirectory } from './pglite-template';
import { systemClock } from '../time/clock';

export class StoreLockedError extends Error {
  constructor(readonly dataDir: string, readonly pid: number) {
    super(
      `The embedded store at ${dataDir} is open in another process (pid ${pid}). ` +
        'Only one process may use it at a time: stop that process, or set DATABASE_URL to use PostgreSQL, ' +
        'which any number of processes can share.',
    );
    this.name = 'StoreLockedError';
  }
}

export function lockFileOf(dataDir: string): string {
  return `${dataDir.replace(/[/\\]+$/, '')}.lock`;
}


/** Takes the lock file for dataDir or throws StoreLockedError. Returns the release function. */
export function lockDataDir(dataDir: string): () => void {
  const lockFile = lockFileOf(dataDir);
  mkdirSync(path.dirname(lockFile), { recursive: true });
  const content = `${process.pid}\n${new Date(systemClock.wall()).toISOString()}\n${process.argv.slice(1).join(' ')}\n`;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(lockFile, content, { flag: 'wx' });
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        process.off('exit', release);
        try {
          if (readFileSync(lockFile, 'utf8') === content) unlinkSync(lockFile);
        } catch {
          // Already gone: nothing to release.
        }
      };
      process.on('exit', release);
      return release;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    let existing = '';
    try {
      existing = readFileSync(lockFile, 'utf8');
    } catch {
      continue; // removed between our attempt and the read: try again
    }
    const holder = Number.parseInt(existing.split('\n')[0] ?? '', 10);
    if (holder === process.pid) throw new StoreLockedError(dataDir, holder);
    if (processAlive(holder)) throw new StoreLockedError(dataDir, holder);
    // The holder died without cleaning up (SIGKILL, power loss): the lock is stale.
    try {
      if (readFileSync(lockFile, 'utf8') === existing) unlinkSync(lockFile);
    } catch {
      // Someone else removed it first; the next attempt decides.
    }
  }
  throw new Error(`could not take the lock file ${lockFile}; remove it if no Leasehold process is running`);
}

export const EMBEDDED_SHARED_BUFFERS = '32MB';

export type EmbeddedDatabase = {
  pglite: PGlite;
  dataDir: string;
  /** Closes PGlite (so the next open needs no crash recovery) and releases the lock. */
  close(): Promise<void>;
};

/** Opens (creating when absent) the PGlite data directory. Throws StoreLockedError when another process has it. */
export async function openEmbedded(dataDir: string): Promise<EmbeddedDatabase> {
  const release = lockDataDir(dataDir);
  try {
    // A new directory starts as a copy of the template `npm run build` made (lib/db/pglite-template.ts).
    const fromTemplate = !isDataDirectory(dataDir) && fillFromTemplate(dataDir);
    if (fromTemplate) logger('store').info(`new embedded data directory ${dataDir}, copied from the template`);
    mkdirSync(dataDir, { recursive: true });
    // Imported here, not at the top: `next build` imports modules while collecting page
    // data, and loading PGlite's WASM there is wasted work.
    const { PGlite } = await import('@electric-sql/pglite');
    // PostgreSQL's default of 128 MB of shared buffers lives in PGlite's WASM heap, in this
    // process, and fills as the store grows; the embedded store is for small deployments and
    // the demo, where 32 MB holds the working set (measured: bench/RESULTS.md, the demo).
    const pglite = await PGlite.create(dataDir, { startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${EMBEDDED_SHARED_BUFFERS}`] });
    let closed: Promise<void> | undefined;
    return {
      pglite,
      dataDir,
      close() {
        closed ??= pglite.close().finally(release);
        return closed;
      },
    };
  } catch (error) {
    release();
    throw error;
  }
}
