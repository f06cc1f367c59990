// The CLI as a person runs it: help, migrate on both stores, the drift check, config
// errors — each ends with the right exit code and sentences, never a stack trace.
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { migrate, readMigrations } from '../../lib/db/migrate';
import { openStore } from '../../lib/db/store';
import { storeHealth } from '../../lib/queries/health';
import { LEASEHOLD_VERSION } from '../../lib/version';
import { createPostgresDatabase, freshPgliteDirectory } from '../support/databases';
import { STACK_LINE, cli } from '../support/run';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'leasehold-cli-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const noConfig = { LEASEHOLD_CONFIG: undefined, DATABASE_URL: undefined };

describe('leasehold CLI', () => {
  it('--help lists the commands and exits 0', async () => {
    const result = await cli(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/Usage: leasehold <command>/);
    expect(result.stdout).toMatch(/migrate\s+apply pending store migrations/);
  });

  it('an unknown command exits 2 with the usage', async () => {
    const result = await cli(['frobnicate']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/leasehold: unknown command "frobnicate"/);
    expect(result.stderr).not.toMatch(STACK_LINE);
  });

  it('migrate, migrate status and migrate check on the embedded store', async () => {
    const dir = await freshPgliteDirectory();
    try {
      const env = { ...noConfig, LEASEHOLD_DATA_DIR: dir.dataDir };
      const before = await cli(['migrate', 'status'], env);
      expect(before.code).toBe(1);
      expect(before.stdout).toMatch(/0 of \d+ migrations applied\npending: 20261202000000_init, /);

      const applied = await cli(['migrate'], env);
      expect(applied.code).toBe(0);
      expect(applied.stdout).toMatch(/applied 20261202000000_init \(\d+ ms\)/);

      const status = await cli(['migrate', 'status', '--json'], env);
      expect(status.code).toBe(0);
      expect(JSON.parse(status.stdout)).toMatchObject({ store: 'pglite', status: { pending: [], failed: [] } });

      const check = await cli(['migrate', 'check'], env);
      expect(check.code).toBe(0);
      expect(check.stdout).toMatch(/matches prisma\/schema\.prisma/);
    } finally {
      dir.remove();
    }
  });

  it('migrate on PostgreSQL with DATABASE_URL', async () => {
    const db = await createPostgresDatabase();
    try {
      const result = await cli(['migrate'], { ...noConfig, DATABASE_URL: db.url });
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/PostgreSQL \(DATABASE_URL\): (\d+) of \1 migrations applied/);
      expect(result.stdout).not.toContain(db.url);
      const again = await cli(['migrate'], { ...noConfig, DATABASE_URL: db.url });
      expect(again.stdout).not.toMatch(/applied 2/);
    } finally {
      await db.drop();
    }
  });

  it('a store a newer release migrated: migrate and a command that opens the store refuse, naming the release to run', async () => {
    const db = await createPostgresDatabase();
    const future = path.join(scratch, 'future-migrations');
    cpSync(path.resolve('prisma/migrations'), future, { recursive: true });
    mkdirSync(path.join(future, '29991231000000_future'));
    writeFileSync(path.join(future, '29991231000000_future', 'migration.sql'), 'CREATE TABLE "Future" (id int);');
    const session = await db.connect();
    try {
      await migrate(session, { migrations: readMigrations(future), release: '9.9.9' });
      for (const command of [['migrate'], ['users', 'list']]) {
        const result = await cli(command, { ...noConfig, DATABASE_URL: db.url });
        expect(result.code, command.join(' ')).toBe(1);
        expect(result.stderr).toContain(`This store is ahead of Leasehold ${LEASEHOLD_VERSION}`);
        expect(result.stderr).toContain('run Leasehold 9.9.9 or later against it');
        expect(result.stderr).not.toMatch(STACK_LINE);
      }
      // migrate status says so and fails (a check before an upgrade or a rollback).
      const status = await cli(['migrate', 'status'], { ...noConfig, DATABASE_URL: db.url });
      expect(status.code).toBe(1);
      expect(status.stdout).toContain('applied but unknown to this version: 29991231000000_future');
      // A server of this release still running on it is not ready (GET /api/health's answer).
      const store = await openStore({ kind: 'postgres', url: db.url }, { migrate: false });
      try {
        expect(await storeHealth(store)).toMatchObject({ status: 'not_ready', migrations: { state: 'ahead', ahead: ['29991231000000_future'] } });
      } finally {
        await store.close();
      }
    } finally {
      await session.close();
      await db.drop();
    }
  });

  it('an unreachable DATABASE_URL is one sentence without the password', async () => {
    const result = await cli(['migrate'], { ...noConfig, DATABASE_URL: 'postgres://app:hunter2@127.0.0.1:1/app' });
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe('leasehold: The store cannot be reached (connection refused).');
  });

  it('config check reports every problem of a bad file, and exits 1', async () => {
    const file = path.join(scratch, 'bad.json');
    writeFileSync(file, JSON.stringify({ pollMs: 1, sources: [{ name: 'r', backend: 'redis', urls: ['http://u:hunter2@x'] }] }));
    const result = await cli(['config', 'check'], { ...noConfig, LEASEHOLD_CONFIG: file });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('bad.json has 2 problems:');
    expect(result.stderr).toContain('- pollMs: expected at least 100 ms, found 1');
    expect(result.stderr).toContain('- sources[0] ("r").urls[0]: expected a redis:// or rediss:// URL, found "http://u:***@x"');
    expect(result.stderr).not.toContain('hunter2');
    expect(result.stderr).not.toMatch(STACK_LINE);
  });

  it('config check --config checks the file it names, not the default one', async () => {
    const file = path.join(scratch, 'named.json');
    writeFileSync(file, JSON.stringify({ pollMs: 5 }));
    const result = await cli(['config', 'check', '--config', file], { ...noConfig, LEASEHOLD_CONFIG: path.resolve('leasehold.config.example.json'), PG_PASSWORD: 'x' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('named.json has a problem:');
    expect(result.stderr).toContain('- pollMs: expected at least 100 ms, found 5');
  });

  it('config check on a good file summarises it', async () => {
    const result = await cli(['config', 'check'], {
      ...noConfig,
      LEASEHOLD_CONFIG: path.resolve('leasehold.config.example.json'),
      PG_PASSWORD: 'x',
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/valid; 3 sources: pg-main \(postgres\), redis-main \(redis\), etcd-main \(etcd\)/);
  });
});

describe('leasehold CLI against a server that sends control and bidi characters', () => {
  it('shows them escaped in tables and in a lease, never raw to the terminal', async () => {
    // A server of any kind may answer (LEASEHOLD_URL is the user's to set): what it sends
    // is untrusted. This one, on loopback, answers with a holder that would reverse the line.
    const { createServer } = await import('node:http');
    const lease = {
      id: 'r/lock:\u202eevil', source: 'r', backend: 'redis', kind: 'lock', key: 'lock:\u202eevil', state: 'held', holder: 'w\u001b[2J\u2066x',
      lastHolder: null, token: '7', fenced: true, ttlMs: 1000, remainingMs: 500, acquiredAt: null, renewedAt: null, expiresAt: null,
      observedAt: new Date().toISOString(), stale: false, candidates: [{ holder: 'c\u200b2', token: '8' }], transitions: 0, recentTransitions: 0,
      lastIntervalMs: null, lastMarginMs: null, problem: null, detail: null,
    };
    const server = createServer((request, response) => {
      response.setHeader('Content-Type', 'application/json');
      if (request.url!.includes('missing')) {
        response.statusCode = 404;
        response.end(JSON.stringify({ error: 'not_found', message: 'no lease lock:\u202emissing\u001b[2J here' }));
        return;
      }
      const body = request.url!.startsWith('/api/v1/leases/') ? { ...lease, events: [] } : { leases: [lease], total: 1, truncated: false, position: '1.0', sources: [] };
      response.end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    try {
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      for (const args of [['leases'], ['lease', 'r/lock:x']]) {
        const result = await cli(args, { ...noConfig, LEASEHOLD_URL: url });
        expect(result.code).toBe(0);
        // eslint-disable-next-line no-control-regex -- the point
        expect(result.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/);
        expect(result.stdout).toContain('\\u202eevil');
      }
      // The server's error message too.
      const missing = await cli(['lease', 'r/lock:missing'], { ...noConfig, LEASEHOLD_URL: url });
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain('\\u202emissing\\u001b[2J');
      // eslint-disable-next-line no-control-regex -- the point
      expect(missing.stderr).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/);
    } finally {
      server.close();
    }
  });
});
