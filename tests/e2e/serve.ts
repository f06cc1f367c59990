// Starts Leasehold for the browser tests the way `npm start` does, on a store of its own:
//   serve.ts embedded <port>    a fresh PGlite directory, no sources, no demo (LEASEHOLD_DEMO=off)
//   serve.ts demo <port>        a fresh PGlite directory, no sources: the embedded demo, as `npm start` runs it
//   serve.ts postgres <port>    a fresh PostgreSQL database on the test server, watching a lease table
//                               of the test PostgreSQL; webhooks may go to 127.0.0.1
//   serve.ts observing <port>   a fresh PGlite directory, observing the test Redis, etcd,
//                               ZooKeeper and PostgreSQL under the e2e prefixes (see OBSERVED below)
//   serve.ts config <port> <file>  a fresh PGlite directory, observing the sources of that
//                               config file (a spec that starts its own backends)
// and removes that store again when it is stopped.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createPostgresDatabase, freshPgliteDirectory } from '../support/databases';
import { ROOT, testServices } from '../support/services';
import { seedCredentials } from './credentials';
import { OBSERVED } from './observed';

const [kind, port, configFile] = process.argv.slice(2);
if ((kind !== 'embedded' && kind !== 'demo' && kind !== 'postgres' && kind !== 'observing' && kind !== 'config') || !port || (kind === 'config') !== Boolean(configFile)) {
  console.error('usage: serve.ts embedded|demo|postgres|observing <port>, or serve.ts config <port> <config file>');
  process.exit(2);
}

const env: Record<string, string | undefined> = {
  ...process.env,
  PORT: port,
  HOST: '127.0.0.1',
  LEASEHOLD_CONFIG: undefined,
  LEASEHOLD_DEMO: kind === 'demo' ? undefined : 'off',
  LEASEHOLD_DEMO_FAULTS: undefined,
  LEASEHOLD_DEMO_USERS: undefined,
  // Anonymous visitors may read, as most specs do; the postgres server signs everyone in
  // (tests/e2e/role-matrix.spec.ts, admin-actions.spec.ts).
  // LEASEHOLD_E2E_ANONYMOUS=config: the config file decides (tests/e2e/oidc.spec.ts).
  LEASEHOLD_ANONYMOUS_ROLE: process.env.LEASEHOLD_E2E_ANONYMOUS === 'config' ? undefined : kind === 'postgres' ? 'none' : 'viewer',
};
let cleanup: () => Promise<void> | void;
if (kind === 'embedded' || kind === 'demo' || kind === 'observing' || kind === 'config') {
  const dir = await freshPgliteDirectory();
  env.LEASEHOLD_DATA_DIR = dir.dataDir;
  env.DATABASE_URL = undefined;
  cleanup = () => dir.remove();
  if (kind === 'config') env.LEASEHOLD_CONFIG = path.resolve(configFile!);
  if (kind === 'observing') {
    const services = testServices();
    const configDir = mkdtempSync(path.join(os.tmpdir(), 'leasehold-e2e-config-'));
    const file = path.join(configDir, 'leasehold.config.json');
    writeFileSync(
      file,
      JSON.stringify({
        pollMs: 500,
        sources: [
          // A canary lease (tests/e2e/canary.spec.ts), under the observed prefix: it must not show among the leases.
          { name: OBSERVED.redisSource, backend: 'redis', urls: [services.redisUrl], match: [`${OBSERVED.redisPrefix}*`], canary: { key: `${OBSERVED.redisPrefix}leasehold-canary`, ttlMs: 5_000, everyMs: 500 } },
          { name: OBSERVED.etcdSource, backend: 'etcd', endpoints: services.etcdEndpoints, prefixes: [OBSERVED.etcdPrefix] },
          { name: OBSERVED.zookeeperSource, backend: 'zookeeper', connect: services.zookeeper, paths: [OBSERVED.zookeeperPath] },
          { name: OBSERVED.flakySource, backend: 'redis', urls: [`redis://127.0.0.1:${OBSERVED.flakyPort}`], match: [`${OBSERVED.flakyPrefix}*`] },
        ],
      }),
    );
    env.LEASEHOLD_CONFIG = file;
    cleanup = () => {
      dir.remove();
      rmSync(configDir, { recursive: true, force: true });
    };
  }
} else {
  const db = await createPostgresDatabase('lh_e2e');
  env.DATABASE_URL = db.url;
  // It watches a lease table of the test PostgreSQL, made here so its first read finds it.
  const services = testServices();
  const pool = new pg.Pool({ connectionString: services.databaseUrl, max: 1 });
  await pool.query(`CREATE TABLE IF NOT EXISTS ${OBSERVED.pgTable} (name VARCHAR(200) PRIMARY KEY, owner VARCHAR(200), expires_at TIMESTAMPTZ NOT NULL, token BIGINT NOT NULL DEFAULT 0)`);
  await pool.end();
  const configDir = mkdtempSync(path.join(os.tmpdir(), 'leasehold-e2e-config-'));
  const file = path.join(configDir, 'leasehold.config.json');
  writeFileSync(
    file,
    JSON.stringify({
      pollMs: 500,
      sources: [{ name: OBSERVED.pgSource, backend: 'postgres', url: services.databaseUrl, tables: [{ table: OBSERVED.pgTable, format: 'leasehold' }] }],
      // tests/e2e/alerts.spec.ts sends to a receiver it starts on this machine.
      alerts: { allowCidrs: ['127.0.0.1/32'] },
    }),
  );
  env.LEASEHOLD_CONFIG = file;
  cleanup = async () => {
    await db.drop();
    rmSync(configDir, { recursive: true, force: true });
  };
}

// Users and tokens for every role (tests/e2e/credentials.ts), seeded before the server opens the store.
await seedCredentials(env.DATABASE_URL ? { kind: 'postgres', url: env.DATABASE_URL } : { kind: 'pglite', dataDir: env.LEASEHOLD_DATA_DIR! }, port);

const server = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], { cwd: ROOT, env: env as NodeJS.ProcessEnv, stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => server.kill(signal));
server.on('exit', async (code) => {
  await cleanup();
  process.exit(code ?? 0);
});
