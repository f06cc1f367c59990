// A PostgreSQL server of the test's own, on a loopback port, for tests that restart it (the
// chaos suite): the server `scripts/services.sh` starts may be the machine's, shared, and is
// never restarted by a test. Made with the installed server's initdb and pg_ctl (Debian's
// postgresql package, which scripts/services.sh installs); run as the postgres OS user when the
// tests run as root, since PostgreSQL refuses to run as root.
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, chmodSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

export type PostgresServer = {
  port: number;
  /** postgres://postgres@127.0.0.1:<port>/<database> */
  url(database?: string): string;
  createDatabase(name: string): Promise<string>;
  /** An immediate stop: no checkpoint, connections cut, as a crash does. */
  kill(): Promise<void>;
  start(): Promise<void>;
  /** kill(), then start() after `downMs`. */
  restart(downMs?: number): Promise<void>;
  stop(): Promise<void>;
};

function binDir(): string {
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base) ? readdirSync(base).filter((v) => existsSync(path.join(base, v, 'bin', 'initdb'))) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (!newest) throw new Error(`no PostgreSQL server binaries under ${base}: run \`bash scripts/services.sh up\`, which installs them`);
  return path.join(base, newest, 'bin');
}

async function answers(port: number): Promise<boolean> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres', connectionTimeoutMillis: 1_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

export async function startPostgresServer(port: number): Promise<PostgresServer> {
  const bin = binDir();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'leasehold-pg-'));
  chmodSync(dir, 0o755);
  const data = path.join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  const as = async (command: string, args: string[]) => {
    const file = path.join(bin, command);
    return asRoot ? run('runuser', ['-u', 'postgres', '--', file, ...args]) : run(file, args);
  };
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: group } = await run('id', ['-g', 'postgres']);
    chownSync(dir, Number(stdout.trim()), Number(group.trim()));
  }
  await as('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions']);
  // fsync off is safe for what the tests do (a server process killed, never the machine: the
  // OS keeps what was written); synchronous_commit stays on, or a commit acknowledged just before
  // an immediate stop is lost with the WAL buffers, a loss no production store would have.
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c fsync=off -c full_page_writes=off -c max_connections=200`;
  const server: PostgresServer = {
    port,
    url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`,
    async createDatabase(name) {
      const client = new pg.Client(server.url());
      await client.connect();
      try {
        await client.query(`CREATE DATABASE "${name}"`);
      } finally {
        await client.end();
      }
      return server.url(name);
    },
    async kill() {
      await as('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => {});
    },
    async start() {
      await as('pg_ctl', ['-D', data, '-o', options, '-l', path.join(dir, 'log'), '-w', '-t', '30', 'start']);
      for (let i = 0; i < 100; i++) {
        if (await answers(port)) return;
        await new Promise((r) => setTimeout(r, 100));
      }
      const log = existsSync(path.join(dir, 'log')) ? readFileSync(path.join(dir, 'log'), 'utf8').slice(-2_000) : '(no log)';
      throw new Error(`the test's PostgreSQL server on 127.0.0.1:${port} started but did not answer within 10 s; the end of its log:\n${log}`);
    },
    async restart(downMs = 0) {
      await server.kill();
      if (downMs > 0) await new Promise((r) => setTimeout(r, downMs));
      await server.start();
    },
    async stop() {
      await server.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await server.start();
  } catch (error) {
    await server.stop().catch(() => {});
    throw error;
  }
  return server;
}
