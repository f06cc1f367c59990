// A new embedded data directory starts as a copy of a template, made once by `npm run build`
// (scripts/build.ts), not by PGlite's initdb inside the server.
//
// Why: PGlite initializes a new directory by starting a second PGlite, running initdb.wasm in
// it and copying the result over as a tarball held in memory. Measured on this machine, that
// takes the process from about 200 MB to 840 MB for several seconds (and 3-4 s of CPU), against
// 420 MB for opening an existing directory. A cleanly closed data directory is an ordinary
// PostgreSQL cluster directory: a copy of it opens like the original.
//
// The template is kept per PGlite version (a different version may write a different
// catalog). When there is none, PGlite initializes the directory itself, as before.
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { processAlive } from './process-alive';

/** The PGlite version installed under `root`, or null when it cannot be read. */
function pgliteVersion(root: string): string | null {
  try {
    const pkg = JSON.parse(readFileSync(path.join(root, 'node_modules', '@electric-sql', 'pglite', 'package.json'), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' && /^[\w.-]+$/.test(pkg.version) ? pkg.version : null;
  } catch {
    return null;
  }
}

export function templatePath(root: string): string | null {
  const version = pgliteVersion(root);
  return version ? path.join(root, '.leasehold', 'pglite-template', version) : null;
}

/** True when `dir` holds a PostgreSQL data directory (PG_VERSION is written last by initdb). */
export const isDataDirectory = (dir: string) => existsSync(path.join(dir, 'PG_VERSION'));

/**
 * Fills the empty directory `dataDir` from the template, when there is one.
 * Returns false (and leaves `dataDir` as it was) when there is no template or `dataDir` is not empty.
 */
export function fillFromTemplate(dataDir: string, root = process.cwd()): boolean {
  const template = templatePath(root);
  if (!template || !isDataDirectory(template)) return false;
  const base = dataDir.replace(/[/\\]+$/, '');
  if (existsSync(base)) {
    const marker = path.join(base, COPYING);
    // A copy into it that was cut short (the process killed) is emptied and made again.
    if (existsSync(marker)) for (const entry of readdirSync(base)) rmSync(path.join(base, entry), { recursive: true, force: true });
    if (readdirSync(base).length > 0) return false;
    // An empty directory that is already there (perhaps a mount point): copied into, marked
    // while the copy is under way, and PG_VERSION last, so that only a whole copy is a data directory.
    writeFileSync(marker, `${process.pid}\n`);
    cpSync(template, base, { recursive: true, filter: (source) => source !== path.join(template, 'PG_VERSION') });
    cpSync(path.join(template, 'PG_VERSION'), path.join(base, 'PG_VERSION'));
    rmSync(marker);
    return true;
  }
  // Copied beside it and renamed into place: a copy cut short never looks like a data
  // directory; it is removed by the next copy (its process is gone) and made again.
  sweepScratch(base);
  const scratch = `${base}.copy-${process.pid}.tmp`;
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(path.dirname(scratch), { recursive: true });
  cpSync(template, scratch, { recursive: true });
  renameSync(scratch, base);
  return true;
}

const COPYING = '.leasehold-copying';

/** Removes the scratch copies beside `base` left by processes that have died. */
function sweepScratch(base: string) {
  const dir = path.dirname(base);
  if (!existsSync(dir)) return;
  const prefix = `${path.basename(base)}.copy-`;
  for (const entry of readdirSync(dir)) {
    const pid = entry.startsWith(prefix) && entry.endsWith('.tmp') ? Number(entry.slice(prefix.length, -'.tmp'.length)) : NaN;
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    if (!processAlive(pid)) rmSync(path.join(dir, entry), { recursive: true, force: true });
  }
}

/** Makes the template for the installed PGlite (once): initialized in a scratch directory, then moved into place. */
export async function makeTemplate(root: string): Promise<{ path: string; made: boolean }> {
  const template = templatePath(root);
  if (!template) throw new Error(`cannot read the PGlite version from ${path.join(root, 'node_modules', '@electric-sql', 'pglite', 'package.json')}`);
  if (isDataDirectory(template)) return { path: template, made: false };
  const scratch = `${template}.${process.pid}.tmp`;
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(path.dirname(template), { recursive: true });
  const { PGlite } = await import('@electric-sql/pglite');
  const db = await PGlite.create(scratch);
  await db.query('SELECT 1');
  await db.close();
  rmSync(template, { recursive: true, force: true });
  renameSync(scratch, template);
  return { path: template, made: true };
}
