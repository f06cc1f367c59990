// `npm run build`: the Prisma client, `next build`, then what the server needs beside the
// build: what it was made from (scripts/tooling/build-fingerprint.ts, so that `npm start` builds again
// when the source changes) and the template new embedded data directories are copied from
// (lib/db/pglite-template.ts, so that the server never runs PGlite's initdb itself).
//
// One build at a time per checkout: several `npm start`s at once (the browser tests start
// three servers) that each find the build stale would otherwise write the same `.next`
// together. The others wait, and with --if-stale (what `npm start` passes) do not build again
// what the first one has just built.
//
// The fingerprint is taken before building: a file changed while the build runs (a `git pull`
// meanwhile) leaves the build recorded as made from the older source, so it is made again.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FINGERPRINT_FILE, sourceFingerprint, staleBuild } from './tooling/build-fingerprint';
import { makeTemplate } from '../lib/db/pglite-template';
import { takeDirLock } from './tooling/dir-lock';
import { describeEnd, runChild } from './tooling/run-child';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ifStale = process.argv.includes('--if-stale');

const releaseLock = await takeDirLock(path.join(root, '.leasehold', 'build.lock'), {
  onWait: (pid) => console.log(`build: another build is running in this checkout (pid ${pid ?? '?'}); waiting for it`),
}).catch((error: unknown) => {
  console.error(`build: ${(error as Error).message}`);
  process.exit(1);
});

// A signal while a step runs is passed on to it (scripts/tooling/run-child.ts) and ends the build when the
// step has ended; one while waiting or making the template ends it at once. The lock goes either way.
let stepRunning = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stepRunning) return;
    releaseLock();
    process.exit(128 + (signal === 'SIGINT' ? 2 : 15));
  });
}

async function run(step: string, args: string[]) {
  stepRunning = true;
  const result = await runChild(process.execPath, args, root);
  stepRunning = false;
  if (result.code !== 0) {
    const stopped = result.signal !== null || result.code === 130 || result.code === 143;
    console.error(`build: ${step} ${stopped ? 'stopped' : 'failed'} (${describeEnd(result)})`);
    releaseLock();
    process.exit(result.code || 1);
  }
}

if (ifStale && !staleBuild(root)) {
  console.log('build: the build is current (made meanwhile by the other process)');
  releaseLock();
  process.exit(0);
}

// Next prints a notice about its anonymous telemetry at the first build; Leasehold's build
// neither needs it nor should send anything. A value the user set is kept.
process.env.NEXT_TELEMETRY_DISABLED ??= '1';

const fingerprint = sourceFingerprint(root);
await run('prisma generate', [path.join(root, 'scripts', 'prisma-generate.mjs')]);
await run('next build', [path.join(root, 'node_modules', 'next', 'dist', 'bin', 'next'), 'build']);
writeFileSync(path.join(root, FINGERPRINT_FILE), `${fingerprint}\n`);

const started = Date.now();
try {
  const { path: template, made } = await makeTemplate(root);
  if (made) {
    console.log(
      `build: prepared an empty embedded store in ${path.relative(root, template)} (${((Date.now() - started) / 1000).toFixed(1)} s), ` +
        'so that a new embedded store starts as a copy of it, in about a second',
    );
  }
} catch (error) {
  // Not fatal: without a template the server initializes a new data directory itself.
  console.warn(`build: could not prepare an empty embedded store (${(error as Error).message}); a new embedded store will be initialized when the server starts, which takes a few seconds longer`);
} finally {
  releaseLock();
}
