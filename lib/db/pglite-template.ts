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
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';

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
  if (existsSync(dataDir)) {
    if (readdirSync(dataDir).length > 0) return false;
    // An empty directory that is already there (perhaps a mount point): copied into.
    cpSync(template, dataDir, { recursive: true });
    return true;
  }
  // Copied beside it and renamed into place: a copy cut short (the process killed) never
  // looks like a data directory, and is simply made again next time.
  const scratch = `${dataDir.replace(/[/\\]+$/, '')}.copy-${process.pid}.tmp`;
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(path.dirname(scratch), { recursive: true });
  cpSync(template, scratch, { recursive: true });
  renameSync(scratch, dataDir);
  return true;
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
