// What a build was made from: a hash of the files `next build` reads (the app, its libraries,
// the config, the lockfile), written beside the build by `npm run build` and compared by
// `npm start`, which builds again when they differ (after a `git pull`, say) instead of
// serving a build of older code. Contents, not times: a checkout that changes nothing
// rebuilds nothing. lib/generated (the Prisma client) is made by the build itself and left out.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOTS = ['app', 'components', 'lib', 'prisma/schema.prisma', 'scripts/prisma-generate.mjs', 'proxy.ts', 'instrumentation.ts', 'next.config.js', 'package.json', 'package-lock.json', 'tsconfig.json'];
const SKIP_DIRS = new Set(['generated', 'node_modules']);
const TESTS = /\.test\.(ts|tsx|mts)$/;

export const FINGERPRINT_FILE = path.join('.next', 'leasehold-source-fingerprint');

function files(root: string, relative: string, out: string[]) {
  const full = path.join(root, relative);
  if (!existsSync(full)) return;
  if (statSync(full).isDirectory()) {
    for (const entry of readdirSync(full).sort()) {
      if (!SKIP_DIRS.has(entry)) files(root, path.join(relative, entry), out);
    }
  } else if (!TESTS.test(relative)) {
    out.push(relative);
  }
}

/** The fingerprint of the source tree under `root`. */
export function sourceFingerprint(root: string): string {
  const list: string[] = [];
  for (const entry of ROOTS) files(root, entry, list);
  const hash = createHash('sha256');
  for (const file of list) {
    hash.update(`${file.split(path.sep).join('/')}\0`);
    hash.update(readFileSync(path.join(root, file)));
    hash.update('\0');
  }
  return `${list.length}:${hash.digest('hex')}`;
}

/** Why the build under `root` must be made (again), or null when it is current. */
export function staleBuild(root: string): string | null {
  if (!existsSync(path.join(root, '.next', 'BUILD_ID'))) return 'no build found';
  const file = path.join(root, FINGERPRINT_FILE);
  if (!existsSync(file)) return 'the build does not record what it was made from';
  return readFileSync(file, 'utf8').trim() === sourceFingerprint(root) ? null : 'the source has changed since the build';
}
