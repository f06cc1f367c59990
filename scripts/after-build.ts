// The last step of `npm run build`: records what the build was made from (lib/build-fingerprint.ts,
// so that `npm start` builds again when the source changes) and makes the template new embedded
// data directories are copied from (lib/db/pglite-template.ts, so that the server never runs
// PGlite's initdb itself).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FINGERPRINT_FILE, sourceFingerprint } from '../lib/build-fingerprint';
import { makeTemplate } from '../lib/db/pglite-template';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
writeFileSync(path.join(root, FINGERPRINT_FILE), `${sourceFingerprint(root)}\n`);

const started = Date.now();
try {
  const { path: template, made } = await makeTemplate(root);
  console.log(`pglite-template: ${made ? `made ${path.relative(root, template)} in ${Date.now() - started} ms` : `${path.relative(root, template)} is there`}`);
} catch (error) {
  // Not fatal: without a template the server initializes a new data directory itself.
  console.warn(`pglite-template: not made (${(error as Error).message}); new embedded stores will be initialized by PGlite in the server`);
}
