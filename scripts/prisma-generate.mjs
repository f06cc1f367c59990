// Runs `prisma generate` offline.
//
// Why: every Prisma CLI command first checks for a native schema engine and tries to
// download it from a host these machines cannot reach. `generate` never calls that
// engine, and the CLI accepts any existing file named by PRISMA_SCHEMA_ENGINE_BINARY,
// so we point it at the Node binary itself. Migrations do not go through the CLI at
// all: lib/db/migrate.ts applies them.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

let cli;
try {
  cli = require.resolve('prisma/build/index.js', { paths: [root] });
} catch {
  // `npm ci --omit=dev` has no Prisma CLI; the client must then have been generated before.
  console.error('prisma-generate: the prisma CLI is not installed; skipping client generation');
  process.exit(0);
}

const env = {
  ...process.env,
  PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY || process.execPath,
  PRISMA_HIDE_UPDATE_MESSAGE: '1',
  CHECKPOINT_DISABLE: '1',
};
const result = spawnSync(process.execPath, [cli, 'generate', '--schema', path.join(root, 'prisma', 'schema.prisma')], {
  cwd: root,
  env,
  stdio: ['ignore', 'pipe', 'pipe'],
  encoding: 'utf8',
  timeout: 120_000,
});
if (result.status !== 0) {
  process.stderr.write(result.stdout ?? '');
  process.stderr.write(result.stderr ?? '');
  console.error(`prisma-generate: prisma generate failed (exit ${result.status ?? result.signal})`);
  process.exit(1);
}
console.log('prisma-generate: client generated in lib/generated/prisma');
