// OIDC sign-in through the real server and a real provider (oidc-provider on 127.0.0.1,
// tests/support/oidc-provider.ts), in Chromium: the sign-in page's single sign-on button, the
// provider's own form, back to Leasehold signed in with the role the groups give; a user in no
// mapped group is refused with a sentence on the sign-in page.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { OIDC_URL } from '../../playwright.config';
import { startOidcProvider, type OidcTestProvider } from '../support/oidc-provider';
import { ROOT } from '../support/services';
import { screenshot, watchConsole } from './support';

let provider: OidcTestProvider;
let server: ChildProcess;
let configDir: string;

test.beforeAll(async () => {
  test.setTimeout(180_000);
  provider = await startOidcProvider({
    clientId: 'leasehold-e2e',
    clientSecret: 'e2e-client-secret-not-used-anywhere-else',
    redirectUris: [`${OIDC_URL}/api/v1/auth/oidc/callback`],
    accounts: { alice: { groups: ['sre-oncall'] }, mallory: { groups: ['marketing'] } },
  });
  configDir = mkdtempSync(path.join(os.tmpdir(), 'leasehold-e2e-oidc-'));
  const config = path.join(configDir, 'leasehold.config.json');
  writeFileSync(
    config,
    JSON.stringify({
      auth: {
        anonymousRole: 'none',
        oidc: {
          issuer: provider.issuer,
          clientId: 'leasehold-e2e',
          clientSecret: 'e2e-client-secret-not-used-anywhere-else',
          redirectUri: `${OIDC_URL}/api/v1/auth/oidc/callback`,
          roles: { operator: ['sre-oncall'] },
          allowInsecureIssuer: true,
          label: 'Sign in with the test provider',
        },
      },
    }),
  );
  server = spawn(process.execPath, ['--import', 'tsx', 'tests/e2e/serve.ts', 'config', new URL(OIDC_URL).port, config], {
    cwd: ROOT,
    stdio: ['ignore', 'inherit', 'inherit'],
    // This server's config decides anonymous access (none), not serve.ts's default.
    env: { ...process.env, LEASEHOLD_E2E_ANONYMOUS: 'config' },
  });
  for (let waited = 0; ; waited += 250) {
    if (waited > 170_000) throw new Error('the OIDC test server did not become healthy');
    if (await fetch(`${OIDC_URL}/api/health`).then((r) => r.ok, () => false)) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
});

test.afterAll(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    await exited;
  }
  await provider?.stop();
  if (configDir) rmSync(configDir, { recursive: true, force: true });
});

test('single sign-on: the provider signs alice in, and her group makes her an operator', async ({ page }) => {
  const errors = watchConsole(page);
  await page.goto('/failovers');
  await expect(page).toHaveURL(/\/login\?next=%2Ffailovers/);
  await page.getByRole('link', { name: 'Sign in with the test provider' }).click();
  await expect(page).toHaveURL(new RegExp(`^${provider.issuer}/interaction/`));
  await page.getByLabel('Login').fill('alice');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(`${OIDC_URL}/failovers`);
  await expect(page.locator('.user-box')).toContainText('alice');
  await expect(page.locator('.user-box')).toContainText('operator');
  await screenshot(page, 'oidc-signed-in');
  const me = await page.evaluate(async () => (await fetch('/api/v1/auth/me')).json());
  expect(me).toEqual({ signedIn: true, name: 'alice', role: 'operator', method: 'oidc' });
  // The test provider's own page asks for a favicon it has not: not Leasehold's.
  expect(errors.filter((error) => !error.includes('(on /interaction/'))).toEqual([]);
});

test('single sign-on: a user in no mapped group is sent back to the sign-in page with the reason', async ({ page }) => {
  await page.goto('/login');
  await page.getByRole('link', { name: 'Sign in with the test provider' }).click();
  await page.getByLabel('Login').fill('mallory');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(/\/login\?error=sso_no_role$/);
  await expect(page.locator('.form-error')).toContainText('Your account is in no group that gives a role here');
  expect(await page.evaluate(async () => (await fetch('/api/v1/auth/me')).json())).toMatchObject({ signedIn: false });
});

test('the sign-in page shows only its own sentences: a link cannot put words of its own on it', async ({ page }) => {
  await page.goto('/login?error=Your%20session%20expired.%20Call%20%2B1-555-0100%20to%20sign%20in');
  await expect(page.getByRole('heading', { name: 'Sign in' })).toBeVisible();
  await expect(page.locator('.form-error')).toHaveCount(0);
  await expect(page.getByText('555-0100')).toHaveCount(0);
});
