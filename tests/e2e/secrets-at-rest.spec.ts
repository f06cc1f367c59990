// A server whose store holds alert endpoints, started without the key their signing secrets
// are encrypted with, does not start: it says which key it needs (lib/alerts/secrets-at-rest.ts).
// With the key, the same store serves.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { expect, test } from '@playwright/test';
import { keyIdOf } from '../../lib/db/secret-box';
import { openStore } from '../../lib/db/store';
import { createWebhook } from '../../lib/db/webhooks';
import { createPostgresDatabase } from '../support/databases';

const PORT = 3109;

function start(env: Record<string, string | undefined>) {
  const server = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
    env: { ...process.env, PORT: String(PORT), HOST: '127.0.0.1', LEASEHOLD_DEMO: 'off', LEASEHOLD_CONFIG: undefined, LEASEHOLD_SECRET_KEY_PREVIOUS: undefined, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  server.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  server.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
  return { server, output: () => output, exited };
}

test('without the key its endpoints were stored with, the server does not start; with it, it serves', async ({ request }) => {
  test.setTimeout(120_000);
  const db = await createPostgresDatabase('lh_e2e_secrets');
  const key = randomBytes(32).toString('base64');
  const saved = process.env.LEASEHOLD_SECRET_KEY;
  process.env.LEASEHOLD_SECRET_KEY = key;
  const store = await openStore({ kind: 'postgres', url: db.url });
  try {
    await createWebhook(store, { name: 'oncall', url: 'http://127.0.0.1:9/hook', format: 'native', secret: `whsec_${randomBytes(24).toString('base64')}`, routingKey: null, rules: [] });
  } finally {
    await store.close();
    process.env.LEASEHOLD_SECRET_KEY = saved;
  }
  try {
    const refused = start({ DATABASE_URL: db.url, LEASEHOLD_SECRET_KEY: undefined });
    const code = await Promise.race([refused.exited, new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 60_000))]);
    if (code === 'still running') refused.server.kill('SIGKILL');
    expect(code, refused.output()).toBe(1);
    expect(refused.output()).toContain('cannot start');
    expect(refused.output()).toContain(`encrypted with the key ${keyIdOf(Buffer.from(key, 'base64'))}`);
    expect(refused.output()).toContain('oncall'); // in a JSON log line here (stdout is a pipe)

    const served = start({ DATABASE_URL: db.url, LEASEHOLD_SECRET_KEY: key });
    try {
      await expect.poll(async () => (await request.get(`http://127.0.0.1:${PORT}/api/health`).catch(() => null))?.status(), { timeout: 60_000 }).toBe(200);
      expect(served.output()).not.toContain('cannot start');
    } finally {
      served.server.kill('SIGTERM');
      await served.exited;
    }
  } finally {
    await db.drop();
  }
});
