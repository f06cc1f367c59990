// Admin actions in the browser, on the postgres server (no anonymous access; it watches a
// lease table of the test PostgreSQL: tests/e2e/serve.ts). A lease is held here with
// lib/lease; an operator signs in, force-expires it through the lease page's panel, sees the
// new token and finds the audit entry; the old holder's renew then fails and the next grant is
// above the new token. A viewer sees no action controls.
import { expect, test, type Page } from '@playwright/test';
import { POSTGRES_URL } from '../../playwright.config';
import { createLeaseClient, LeaseLostError } from '../../lib/lease';
import { testServices } from '../support/services';
import { credentials } from './credentials';
import { OBSERVED } from './observed';
import { screenshot, watchConsole } from './support';

test.use({ baseURL: POSTGRES_URL });

async function signIn(page: Page, role: 'viewer' | 'operator' | 'admin', next: string) {
  const user = credentials(POSTGRES_URL).users[role];
  await page.goto(next);
  await expect(page).toHaveURL(/\/login\?next=/);
  await page.getByLabel('Name').fill(user.name);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(new RegExp(`${next.replace(/[?]/g, '\\?')}$`));
}

test('an operator force-expires a held lease through the panel, sees the new token and finds the audit entry', async ({ page }) => {
  test.setTimeout(90_000);
  const errors = watchConsole(page);
  const client = createLeaseClient({ backend: 'postgres', url: testServices().databaseUrl, table: OBSERVED.pgTable });
  const name = `job-${Date.now().toString(36)}`;
  const lease = (await client.acquire(name, { holder: 'worker-7', ttlMs: 120_000 }))!;
  expect(lease).not.toBeNull();
  const key = `${OBSERVED.pgTable}/${name}`;
  const id = `${OBSERVED.pgSource}/${key}`;
  try {
    await signIn(page, 'operator', `/leases/${encodeURIComponent(id)}`);
    await expect(page.getByText('Force-expire…')).toBeVisible({ timeout: 15_000 });
    await page.getByRole('button', { name: 'Force-expire…' }).click();
    const panel = page.getByRole('region', { name: 'Admin actions' });
    await expect(panel).toContainText(lease.holder);
    await expect(panel).toContainText(String(lease.token));
    await panel.getByLabel(/Reason/).fill('worker-7 is wedged in a GC pause (e2e)');
    await panel.getByRole('button', { name: 'Preview (dry run)' }).click();
    await expect(panel.getByLabel('Dry run')).toContainText('UPDATE');
    const now = panel.getByRole('button', { name: 'Force-expire now' });
    await expect(now).toBeDisabled(); // the key is not typed in yet
    await panel.getByLabel(/Type the lease key/).fill(key);
    await now.click();
    const result = panel.getByRole('status');
    await expect(result).toContainText(`Token ${lease.token} → ${BigInt(lease.token) + 1n}`);
    await screenshot(page, 'admin-force-expired');

    // The old holder is done: its renew fails; the next grant is above the bumped token.
    await expect(client.renew(lease)).rejects.toBeInstanceOf(LeaseLostError);
    const next = (await client.acquire(name, { holder: 'worker-3', ttlMs: 60_000 }))!;
    expect(BigInt(next.token)).toBeGreaterThan(BigInt(lease.token) + 1n);

    // The audit entry, from the result's link.
    await result.getByRole('link', { name: /Audit entry/ }).click();
    await expect(page).toHaveURL(/\/audit/);
    const table = page.getByRole('table', { name: 'Audit log' });
    await expect(table).toContainText('e2e-operator (operator, password)');
    await expect(table).toContainText(id);
    await expect(table).toContainText('worker-7 is wedged in a GC pause (e2e)');
    await expect(table).toContainText(`${lease.token} → ${BigInt(lease.token) + 1n}`);
    await client.release(next);
  } finally {
    await client.close();
  }
  expect(errors).toEqual([]);
});

test('a viewer sees the lease but no action controls, and the API refuses it anyway', async ({ page }) => {
  const client = createLeaseClient({ backend: 'postgres', url: testServices().databaseUrl, table: OBSERVED.pgTable });
  const name = `viewed-${Date.now().toString(36)}`;
  const lease = (await client.acquire(name, { holder: 'worker-1', ttlMs: 120_000 }))!;
  const id = `${OBSERVED.pgSource}/${OBSERVED.pgTable}/${name}`;
  try {
    await signIn(page, 'viewer', `/leases/${encodeURIComponent(id)}`);
    await expect(page.getByText(lease.holder).first()).toBeVisible({ timeout: 15_000 });
    await expect(page.getByRole('button', { name: /Force-/ })).toHaveCount(0);
    await expect(page.getByRole('link', { name: 'Audit log' })).toHaveCount(0);
    const refused = await page.evaluate(async (leaseId) => {
      const response = await fetch(`/api/v1/leases/${encodeURIComponent(leaseId)}/force-expire`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ expectedHolder: 'x', expectedToken: '1', reason: 'a viewer trying anyway' }),
      });
      return { status: response.status, error: ((await response.json()) as { error: string }).error };
    }, id);
    expect(refused).toEqual({ status: 403, error: 'forbidden' });
    expect(await client.inspect(name)).toMatchObject({ holder: lease.holder });
  } finally {
    await client.release(lease);
    await client.close();
  }
});

test('the sign-in page, the settings page and the audit log fit a phone; an admin makes a token there and sees it once', async ({ page }) => {
  const errors = watchConsole(page);
  await page.setViewportSize({ width: 390, height: 844 });
  const width = () => page.evaluate(() => document.documentElement.scrollWidth);
  await page.goto('/login');
  await expect(page.getByRole('heading', { name: 'Sign in' })).toBeVisible();
  expect(await width()).toBeLessThanOrEqual(390);
  await screenshot(page, 'phone-sign-in');
  const admin = credentials(POSTGRES_URL).users.admin;
  await page.getByLabel('Name').fill(admin.name);
  await page.getByLabel('Password').fill(admin.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(`${POSTGRES_URL}/`);
  await page.goto('/settings');
  await expect(page.getByRole('table', { name: 'Users' })).toContainText('e2e-operator');
  const tokens = page.getByRole('region', { name: 'API tokens' });
  const name = `phone-${Date.now().toString(36)}`;
  await tokens.getByLabel('Name').fill(name);
  await tokens.getByRole('button', { name: 'Make token' }).click();
  await expect(tokens.getByRole('status').first()).toContainText(name);
  const shown = (await tokens.locator('pre').textContent())!;
  expect(shown).toMatch(/^lh_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
  expect((await fetch(`${POSTGRES_URL}/api/v1/leases`, { headers: { Authorization: `Bearer ${shown}` } })).status).toBe(200);
  expect(await width()).toBeLessThanOrEqual(390);
  await screenshot(page, 'phone-settings');
  await page.goto('/audit');
  await expect(page.getByRole('heading', { name: 'Audit log' })).toBeVisible();
  expect(await width()).toBeLessThanOrEqual(390);
  await screenshot(page, 'phone-audit');
  expect(errors).toEqual([]);
});
