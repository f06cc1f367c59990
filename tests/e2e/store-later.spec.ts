// A server started before its PostgreSQL store can be reached keeps serving (health 503), and
// when the store comes, it opens it and starts observing by itself: no restart needed.
// The store is reached through a TCP proxy that does not listen until the test says so.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { createPostgresDatabase } from '../support/databases';
import { testServices } from '../support/services';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });

test('a store that is down at start: the server waits for it, then observes without a restart', async ({ request }) => {
  test.setTimeout(150_000);
  const db = await createPostgresDatabase('lh_e2e_late');
  const real = new URL(db.url);
  const proxyPort = await freePort();
  const late = new URL(db.url);
  late.port = String(proxyPort);
  const configDir = mkdtempSync(path.join(os.tmpdir(), 'leasehold-late-'));
  const configFile = path.join(configDir, 'leasehold.config.json');
  writeFileSync(configFile, JSON.stringify({ pollMs: 500, sources: [{ name: 'late-redis', backend: 'redis', urls: [testServices().redisUrl], match: ['e2e-late:*'] }] }));
  const port = 3107;
  const base = `http://127.0.0.1:${port}`;
  const server = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
    env: { ...process.env, LEASEHOLD_ANONYMOUS_ROLE: 'viewer', PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: late.toString(), LEASEHOLD_CONFIG: configFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  server.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  server.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let proxy: TcpProxy | undefined;
  try {
    await expect.poll(() => output, { timeout: 90_000 }).toContain('store not available yet');
    expect((await request.get(`${base}/api/health`)).status()).toBe(503);
    // The server's log is JSON lines here (stdout is a pipe): the collector's carry "area":"collector".
    expect(output).not.toContain('"area":"collector"');

    // The store comes: the proxy starts listening and forwards to the real PostgreSQL.
    proxy = await startTcpProxy(real.hostname, Number(real.port || 5432), proxyPort);

    await expect.poll(async () => (await request.get(`${base}/api/health`)).status(), { timeout: 60_000 }).toBe(200);
    await expect
      .poll(async () => ((await (await request.get(`${base}/api/v1/sources`)).json()) as { sources: { name: string; status: string }[] }).sources.find((s) => s.name === 'late-redis')?.status, {
        timeout: 30_000,
      })
      .toBe('up');
    expect(output).toMatch(/"area":"collector"[^\n]*"msg":"[^"\n]* started for /);
  } finally {
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
    server.kill('SIGKILL');
    await proxy?.close();
    rmSync(configDir, { recursive: true, force: true });
    await db.drop();
  }
});
