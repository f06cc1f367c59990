// Starts Leasehold for the browser tests the way `npm start` does, on a store of its own:
//   serve.ts embedded <port>   a fresh PGlite directory
//   serve.ts postgres <port>   a fresh PostgreSQL database on the test server
// and removes that store again when it is stopped.
import { spawn } from 'node:child_process';
import { createPostgresDatabase, freshPgliteDirectory } from '../support/databases';
import { ROOT } from '../support/services';

const [kind, port] = process.argv.slice(2);
if ((kind !== 'embedded' && kind !== 'postgres') || !port) {
  console.error('usage: serve.ts embedded|postgres <port>');
  process.exit(2);
}

const env: Record<string, string | undefined> = { ...process.env, PORT: port, HOST: '127.0.0.1', LEASEHOLD_CONFIG: undefined };
let cleanup: () => Promise<void> | void;
if (kind === 'embedded') {
  const dir = await freshPgliteDirectory();
  env.LEASEHOLD_DATA_DIR = dir.dataDir;
  env.DATABASE_URL = undefined;
  cleanup = () => dir.remove();
} else {
  const db = await createPostgresDatabase('lh_e2e');
  env.DATABASE_URL = db.url;
  cleanup = () => db.drop();
}

const server = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], { cwd: ROOT, env: env as NodeJS.ProcessEnv, stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => server.kill(signal));
server.on('exit', async (code) => {
  await cleanup();
  process.exit(code ?? 0);
});
