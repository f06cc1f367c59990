// The alerts page in the browser (issue 17), on the postgres server (no anonymous access;
// alerts.allowCidrs lets it send to 127.0.0.1: tests/e2e/serve.ts). An admin signs in, adds
// an endpoint pointing at a real HTTP receiver this test starts, copies the secret shown once,
// presses Send test and sees it delivered with status 200; the receiver got it, and its
// signature verifies with the `standardwebhooks` package under that secret; the delivery is in
// the endpoint's log. A lease left to lapse fires missed_renewal; a viewer sees it, and sees
// no endpoint and no control. Both fit a phone (390×844) without sideways scrolling.
import { expect, test, type Page } from '@playwright/test';
import { POSTGRES_URL } from '../../playwright.config';
import { createLeaseClient } from '../../lib/lease';
import { ALERT_RULE_TYPES } from '../../lib/domain/alert-types';
import { testServices } from '../support/services';
import { startReceiver, type Receiver } from '../support/webhook-receiver';
import { credentials } from './credentials';
import { OBSERVED } from './observed';
import { screenshot, watchConsole } from './support';

test.use({ baseURL: POSTGRES_URL, viewport: { width: 1440, height: 900 } });

async function signIn(page: Page, role: 'viewer' | 'admin') {
  const user = credentials(POSTGRES_URL).users[role];
  await page.goto('/alerts');
  await expect(page).toHaveURL(/\/login\?next=/);
  await page.getByLabel('Name').fill(user.name);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(/\/alerts$/);
  await expect(page.getByRole('heading', { level: 1, name: 'Alerts' })).toBeVisible();
}

/** Acquires a lease in the observed Postgres table and never renews it; its lease id. */
async function leaseLeftToLapse(name: string, holder: string, ttlMs: number): Promise<string> {
  const client = createLeaseClient({ backend: 'postgres', url: testServices().databaseUrl, table: OBSERVED.pgTable });
  const key = `${name}-${Date.now().toString(36)}`;
  try {
    await client.acquire(key, { holder, ttlMs });
  } finally {
    await client.close();
  }
  return `${OBSERVED.pgSource}/${OBSERVED.pgTable}/${key}`;
}

const pageWidth = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth);

let secret: string | null = null;
let receiver: Receiver;

test.beforeAll(async () => {
  receiver = await startReceiver(() => secret);
});

test.afterAll(async () => {
  await receiver.close();
});

test('an admin adds an endpoint, keeps the secret shown once, sends a test the receiver verifies, and finds it in the log', async ({ page }) => {
  test.setTimeout(90_000);
  const errors = watchConsole(page);
  await signIn(page, 'admin');
  const name = `e2e-receiver-${Date.now().toString(36)}`;

  const endpoints = page.getByRole('region', { name: 'Endpoints' });
  await expect(endpoints).toBeVisible();
  await endpoints.getByText('Add an endpoint').click();
  const form = endpoints.getByRole('form', { name: 'Add an endpoint' });
  await form.getByLabel('Name').fill(name);
  await form.getByLabel(/^URL/).fill(receiver.url);
  await expect(form.getByLabel('Format')).toHaveValue('native');
  await expect(form.getByLabel(/routing key/i)).toHaveCount(0); // only for pagerduty
  await form.getByLabel('Format').selectOption('pagerduty');
  await expect(form.getByLabel(/routing key/i)).toBeVisible();
  await form.getByLabel('Format').selectOption('native');
  await form.getByRole('button', { name: 'Add endpoint' }).click();

  // The secret, once, with what to do with it.
  const once = endpoints.getByTestId('secret-once');
  await expect(once).toContainText('shown this once');
  await expect(once).toContainText('copy it now');
  secret = (await once.getByTestId('webhook-secret').textContent())!.trim();
  expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]{32,}$/);

  const card = page.getByRole('article', { name: `Endpoint ${name}` });
  await expect(card).toContainText('native');
  await expect(card).toContainText('enabled');
  await expect(card).toContainText(new URL(receiver.url).host);
  await screenshot(page, 'alerts-endpoint-added');

  await card.getByRole('button', { name: 'Send test' }).click();
  const outcome = card.getByTestId('test-outcome');
  await expect(outcome).toContainText('delivered', { timeout: 20_000 });
  await expect(outcome).toContainText('status 200');

  // The receiver got it, signed: verified with the standardwebhooks package under the copied secret.
  const test_ = receiver.received.find((r) => (r.body as { type?: string }).type === 'alert.test');
  expect(test_, 'the test message at the receiver').toBeDefined();
  expect(test_!.error).toBeNull();
  expect(test_!.verified).toBe(true);
  expect(test_!.id).toMatch(/^msg_[0-9a-f]{32}$/);

  // And it is in the endpoint's delivery log, delivered with 200.
  const log = card.getByRole('table', { name: `Delivery log of ${name}` });
  const row = log.getByTestId('delivery-row').filter({ hasText: 'test' }).first();
  await expect(row).toHaveAttribute('data-status', 'delivered', { timeout: 10_000 });
  await expect(row).toContainText('200');
  await expect(card.getByTestId('delivery-counts')).toContainText(/[1-9]\d* delivered/);
  // The secret stays on screen through the page's refresh until it is put away.
  await expect(once).toBeVisible();
  await once.getByRole('button', { name: 'I have kept it' }).click();
  await expect(page.getByTestId('webhook-secret')).toHaveCount(0);

  // A phone: nothing wider than the screen; the log scrolls inside its own frame.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  await expect(page.getByRole('article', { name: `Endpoint ${name}` })).toBeVisible();
  expect(await pageWidth(page), 'the admin\'s alerts page is wider than the phone').toBeLessThanOrEqual(390);
  await screenshot(page, 'phone-alerts-admin');
  await page.setViewportSize({ width: 1440, height: 900 });

  // Deleting asks first.
  const again = page.getByRole('article', { name: `Endpoint ${name}` });
  await again.getByRole('button', { name: 'Delete…' }).click();
  await again.getByRole('button', { name: 'Delete endpoint' }).click();
  await expect(page.getByRole('article', { name: `Endpoint ${name}` })).toHaveCount(0);
  expect(errors).toEqual([]);
});

test('a viewer sees what fires, with no endpoint and no control, on a phone too', async ({ page }) => {
  test.setTimeout(90_000);
  const errors = watchConsole(page);
  // A lease left to lapse: missed_renewal fires for it.
  const id = await leaseLeftToLapse('lapsed', 'worker-lapsing', 3_000);
  await signIn(page, 'viewer');
  const firing = page.getByRole('list', { name: 'Firing alerts' }).getByTestId('firing-alert').filter({ hasText: id });
  await expect(async () => {
    await page.reload();
    await expect(firing).toBeVisible({ timeout: 1_000 });
  }).toPass({ timeout: 20_000 });
  await expect(firing).toContainText('critical');
  await expect(firing).toContainText('worker-lapsing');
  await expect(firing.getByRole('link', { name: id })).toHaveAttribute('href', `/leases/${encodeURIComponent(id)}`);
  await expect(page.getByRole('navigation', { name: 'Console' }).getByTestId('nav-firing-count')).toBeVisible({ timeout: 35_000 });

  // No endpoints, and nothing to press or change.
  const main = page.getByRole('main');
  await expect(page.getByRole('region', { name: 'Endpoints' })).toHaveCount(0);
  await expect(main.getByText('Add a rule')).toHaveCount(0);
  await expect(main.getByText('Add a silence')).toHaveCount(0);
  await expect(main.getByRole('button')).toHaveCount(0);
  await expect(main.getByRole('combobox')).toHaveCount(0);
  await expect(main.getByRole('textbox')).toHaveCount(0);
  await expect(page.getByRole('table', { name: 'Alert rules' })).toContainText('missed renewal');
  // The API says the same.
  const status = await page.evaluate(async () => (await fetch('/api/v1/webhooks')).status);
  expect(status).toBe(403);

  // Where alerts went is for admins: a viewer sees no deliveries.
  await expect(firing.getByTestId('alert-deliveries')).toHaveCount(0);

  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  await expect(firing).toBeVisible();
  expect(await pageWidth(page), 'the viewer\'s alerts page is wider than the phone').toBeLessThanOrEqual(390);
  // On a phone each rule is a short card; its type, scope and parameters unfold on demand.
  const rules = page.getByRole('table', { name: 'Alert rules' });
  await expect(rules.getByRole('cell', { name: /every lease and source/ }).first()).toBeHidden();
  await screenshot(page, 'phone-alerts-viewer');
  await page.getByRole('button', { name: 'Show type, scope and parameters' }).click();
  await expect(rules.getByRole('cell', { name: /every lease and source/ }).first()).toBeVisible();
  expect(errors.filter((error) => !/status of 403/.test(error))).toEqual([]);
});

test('an admin sees where each alert went: its deliveries under the alert, with the answer', async ({ page }) => {
  test.setTimeout(90_000);
  const errors = watchConsole(page);
  await signIn(page, 'admin');
  const name = `e2e-deliveries-${Date.now().toString(36)}`;
  const made = await page.evaluate(
    async ({ name, url }) => {
      const response = await fetch('/api/v1/webhooks', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name, url, rules: ['missed_renewal'] }) });
      return { status: response.status, body: await response.json() };
    },
    { name, url: receiver.url },
  );
  expect(made.status).toBe(201);
  secret = made.body.secret;
  const id = await leaseLeftToLapse('delivered', 'worker-delivered', 2_000);
  const firing = page.getByRole('list', { name: 'Firing alerts' }).getByTestId('firing-alert').filter({ hasText: id });
  const deliveries = firing.getByTestId('alert-deliveries');
  await expect(async () => {
    await page.reload();
    await expect(deliveries).toContainText('1 delivered', { timeout: 1_000 });
  }).toPass({ timeout: 30_000 });
  await deliveries.getByText(/^Deliveries:/).click();
  const line = deliveries.getByTestId('alert-delivery').filter({ hasText: name });
  await expect(line).toHaveAttribute('data-status', 'delivered');
  await expect(line).toContainText('firing');
  await expect(line).toContainText('HTTP 200');
  await screenshot(page, 'alerts-deliveries');
  // The rule and silence forms share their scope field and rule types.
  const main = page.getByRole('main');
  await main.getByText('Add a rule').click();
  const ruleForm = page.getByRole('form', { name: 'Add a rule' });
  await expect(ruleForm.getByLabel('Scope')).toHaveValue('all');
  await expect(ruleForm.getByLabel('Type').locator('option')).toHaveCount(ALERT_RULE_TYPES.length);
  await main.getByText('Add a silence').click();
  const silenceForm = page.getByRole('form', { name: 'Add a silence' });
  await expect(silenceForm.getByLabel('Scope')).toHaveValue('all');
  // Every rule type, and "any".
  await expect(silenceForm.getByLabel('Rule type').locator('option')).toHaveCount(ALERT_RULE_TYPES.length + 1);
  await expect(silenceForm.getByLabel('Rule type').locator('option').nth(1)).toHaveText('missed renewal');
  await screenshot(page, 'alerts-forms');
  const removed = await page.evaluate(async (webhookId) => (await fetch(`/api/v1/webhooks/${webhookId}`, { method: 'DELETE' })).status, made.body.webhook.id as string);
  expect(removed).toBe(204);
  expect(errors).toEqual([]);
});
