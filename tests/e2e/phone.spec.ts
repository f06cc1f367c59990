// Every console page on a phone (390×844, an iPhone's width) and on a desktop, with a lease of
// a long key and a failover on the observing server: no page is wider than the screen, the
// navigation folds behind a menu button, the overview is a list of cards whose holder and key
// name show whole, and tables scroll inside their frame. Screenshots of every page at both
// sizes go to test-results/screenshots/ (phone-*.png, desktop-*.png).
import { expect, test, type Page } from '@playwright/test';
import { createLeaseClient } from '../../lib/lease';
import { testServices } from '../support/services';
import { OBSERVED } from './observed';
import { OBSERVING_URL } from '../../playwright.config';
import { screenshot, signIn, watchConsole } from './support';

// A key of its own per worker: a worker started again after a failure runs beforeAll again.
const KEY = `${OBSERVED.redisPrefix}phone/payments-reconciliation-eu-west-${Math.random().toString(36).slice(2, 6)}/leader`;
const ID = `${OBSERVED.redisSource}/${KEY}`;
const PAGES = [
  ['overview', '/'],
  ['failovers', '/failovers'],
  ['sources', '/sources'],
  ['alerts', '/alerts'],
  ['audit', '/audit'],
  ['digest', '/digest'],
  ['lease', `/leases/${encodeURIComponent(ID)}`],
  ['not-found', '/no-such-page/here'],
] as const;

let holders: { first: string; second: string };

test.beforeAll(async ({ request }) => {
  test.setTimeout(60_000);
  // A failover of the long-keyed lease: the first holder lets it expire, another takes it.
  const client = createLeaseClient({ backend: 'redis', urls: [testServices().redisUrl] });
  try {
    const first = (await client.acquire(KEY, { holder: 'reconciler-eu-west-1a', ttlMs: 1_500 }))!;
    await expect.poll(async () => ((await (await request.get(`/api/v1/leases/${encodeURIComponent(ID)}`)).json()) as { holder?: string }).holder, { timeout: 10_000 }).toBe(first.holder);
    const second = (await client.acquire(KEY, { holder: 'reconciler-eu-west-1b', ttlMs: 600_000, waitMs: 10_000 }))!;
    holders = { first: first.holder, second: second.holder };
    await expect
      .poll(async () => ((await (await request.get('/api/v1/failovers?since=15m')).json()) as { failovers: { leaseId: string }[] }).failovers.some((f) => f.leaseId === ID), { timeout: 10_000 })
      .toBe(true);
  } finally {
    await client.close();
  }
});

async function open(page: Page, url: string) {
  await page.goto(url);
  await expect(page.getByRole('status').filter({ hasText: 'Live' })).toBeVisible({ timeout: 10_000 });
  // Data arrived and was drawn: no loading boxes are left.
  await expect(page.locator('[aria-busy="true"]')).toHaveCount(0, { timeout: 10_000 });
}

const pageWidth = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth);

test('on a phone (390×844) no page is wider than the screen, and every page is drawn for it', async ({ page }) => {
  test.setTimeout(120_000);
  const errors = watchConsole(page);
  await page.setViewportSize({ width: 390, height: 844 });
  await signIn(page, 'operator', OBSERVING_URL); // the audit log is an operator's
  for (const [name, url] of PAGES) {
    await open(page, url);
    expect(await pageWidth(page), `${name} (${url}) is wider than the phone`).toBeLessThanOrEqual(390);
    await screenshot(page, `phone-${name}`);
  }
  expect(errors.filter((error) => !/404/.test(error))).toEqual([]);
});

test('on a phone the navigation folds behind a menu button that opens it and closes after a choice', async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await open(page, '/');
  const nav = page.getByRole('navigation', { name: 'Console' });
  const menu = page.getByRole('button', { name: 'Menu' });
  await expect(nav).toBeHidden();
  // The live indicator stays in the bar, the menu closed.
  await expect(page.getByTestId('live-status')).toBeVisible();
  await menu.click();
  await expect(nav).toBeVisible();
  await expect(page.getByRole('button', { name: 'Close' })).toHaveAttribute('aria-expanded', 'true');
  await screenshot(page, 'phone-menu-open');
  await nav.getByRole('link', { name: 'Failovers' }).click();
  await expect(page).toHaveURL(/\/failovers$/);
  await expect(nav).toBeHidden();
  await expect(page.getByRole('button', { name: 'Menu' })).toHaveAttribute('aria-expanded', 'false');
});

test('on a phone the overview is a list of cards: key name, state, holder, remaining and token whole', async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await open(page, `/?q=${encodeURIComponent('payments-reconciliation')}`);
  const card = page.locator(`[data-testid="lease-row"][data-lease-id="${ID}"]`);
  await expect(card).toHaveClass(/lease-card/);
  await expect(card.getByTestId('lease-holder')).toHaveText(holders.second);
  for (const part of [card.getByTestId('lease-holder'), card.locator('.key-name'), card.locator('.kind'), card.getByTestId('lease-token')]) {
    // Shown whole: nothing of it is cut off by an ellipsis.
    expect(await part.evaluate((element) => element.scrollWidth <= element.clientWidth + 1), (await part.textContent()) ?? '').toBe(true);
  }
  const box = await card.boundingBox();
  expect(box!.x + box!.width).toBeLessThanOrEqual(390);
});

test('on a phone the failovers table scrolls inside its frame, lease ids not broken letter by letter', async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await open(page, '/failovers');
  const row = page.locator(`[data-testid="failover-row"][data-lease-id="${ID}"]`).first();
  await expect(row).toBeVisible();
  const frame = page.locator('.table-scroll').first();
  expect(await frame.evaluate((element) => element.clientWidth <= 390 && element.scrollWidth >= element.clientWidth)).toBe(true);
  // The lease link is at least 20 characters wide: a long id wraps at its slashes, not after each letter.
  const link = row.getByRole('link');
  const { width, charWidth } = await link.evaluate((element) => ({ width: element.getBoundingClientRect().width, charWidth: parseFloat(getComputedStyle(element).fontSize) * 0.55 }));
  expect(width).toBeGreaterThan(charWidth * 20);
});

test('on a desktop every page keeps to the window, and the kind tag of a lease shows whole', async ({ page }) => {
  test.setTimeout(120_000);
  const errors = watchConsole(page);
  await page.setViewportSize({ width: 1280, height: 800 });
  await signIn(page, 'operator', OBSERVING_URL);
  for (const [name, url] of PAGES) {
    await open(page, url);
    expect(await pageWidth(page), `${name} (${url})`).toBeLessThanOrEqual(1280);
    await screenshot(page, `desktop-${name}`);
  }
  await open(page, `/?q=${encodeURIComponent('payments-reconciliation')}`);
  const kind = page.locator(`[data-testid="lease-row"][data-lease-id="${ID}"] .kind`);
  await expect(kind).toHaveText('lock');
  expect(await kind.evaluate((element) => element.scrollWidth <= element.clientWidth + 1)).toBe(true);
  // The sidebar's colour runs the page's whole length: the shell paints it, not the sidebar box.
  const shell = await page.locator('.shell').evaluate((element) => getComputedStyle(element).backgroundImage);
  expect(shell).toContain('linear-gradient');
  expect(errors.filter((error) => !/404/.test(error))).toEqual([]);
});
