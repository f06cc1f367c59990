// SIGTERM closes the embedded store before the process exits: its lock file is gone and
// the next open needs no crash recovery.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { lockFileOf } from '../../lib/db/embedded';
import { freshPgliteDirectory } from '../support/databases';

test('npm start on the embedded store stops cleanly on SIGTERM', async ({ request }) => {
  test.setTimeout(120_000);
  const dir = await freshPgliteDirectory();
  const port = 3103;
  const server = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
    env: { ...process.env, PORT: String(port), LEASEHOLD_DATA_DIR: dir.dataDir, DATABASE_URL: '', LEASEHOLD_CONFIG: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  server.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  server.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => server.on('exit', (code) => resolve(code)));
  try {
    await expect
      .poll(async () => (await request.get(`http://127.0.0.1:${port}/api/health`).catch(() => null))?.status(), { timeout: 90_000 })
      .toBe(200);
    expect(existsSync(lockFileOf(dir.dataDir))).toBe(true);

    server.kill('SIGTERM');
    const code = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve('timeout'), 15_000))]);
    expect(code, output).toBe(0);
    expect(output).toContain('SIGTERM: closing the store');
    expect(existsSync(lockFileOf(dir.dataDir))).toBe(false);
  } finally {
    server.kill('SIGKILL');
    dir.remove();
  }
});
