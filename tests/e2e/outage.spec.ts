// The console during an outage, as an on-call engineer opens it: every source unreachable.
// A server of its own (tests/support/outage-server.ts) observes two Redis servers it starts
// and an etcd endpoint where nothing listens; the spec takes leases on both Redis servers,
// lets the server see them, then kills both. Opening the overview must then show (how soon is reported, not asserted),
// what is known: the down banner naming each source and why, the leases last seen, marked
// stale, counters that do not read as healthy, and a live indicator that says what it waits for.
import { expect, test } from '@playwright/test';
import { OUTAGE_URL } from '../../playwright.config';
import { startOutageServer, type OutageServer } from '../support/outage-server';
import { screenshot, watchConsole } from './support';

let outage: OutageServer | undefined;
let leaseIds: string[] = [];

test.beforeAll(async () => {
  test.setTimeout(180_000);
  // Two Redis servers (16395, 16396) and an etcd endpoint where nothing listens (16397, loopback: refused at once).
  outage = await startOutageServer({ port: Number(new URL(OUTAGE_URL).port), redisPorts: [16395, 16396], deadEtcd: 'http://127.0.0.1:16397', stdout: 'inherit' });
  leaseIds = outage.leaseIds;
});

test.afterAll(async () => {
  await outage?.stop();
});

for (const size of [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
]) {
  test(`every source down (${size.name}): the banner, the last known leases marked stale and what the page waits for on opening (how soon: reported)`, async ({ page }) => {
    const errors = watchConsole(page);
    await page.setViewportSize({ width: size.width, height: size.height });
    await page.goto(OUTAGE_URL + '/', { waitUntil: 'commit' });
    // The moment the page shows what is known, on the page's own clock from the navigation's
    // start (performance.now()), looked at every frame: the banner saying every source is down,
    // and each lease last seen, marked stale.
    const shown = await page.waitForFunction(
      (ids) => {
        const banner = document.querySelector('[data-testid="source-down-banner"]');
        const rows = ids.map((id) => document.querySelector(`[data-testid="lease-row"][data-lease-id="${CSS.escape(id)}"]`));
        const ready = banner?.textContent?.includes('None of the 3 sources can be read') && rows.every((row) => row?.getAttribute('data-stale') === 'true');
        return ready ? performance.now() : false;
      },
      leaseIds,
      { polling: 'raf', timeout: 10_000 },
    );
    const shownAfter = Math.round((await shown.jsonValue()) as number);
    test.info().annotations.push({ type: 'outage view shown after', description: `${shownAfter} ms` });
    process.stderr.write(`e2e: outage view (${size.name}) shown ${shownAfter} ms after opening\n`);
    // How soon is reported, not asserted: a time measured on these 2 shared cores moves by
    // several hundred ms between runs of the same code (1,758 and 2,054 ms on one tree), and
    // speed is measured by benchmarks (bench/), never by a timed assertion in a test.
    const banner = page.getByTestId('source-down-banner');
    for (const id of leaseIds) {
      const row = page.locator(`[data-testid="lease-row"][data-lease-id="${id}"]`);
      await expect(row.getByTestId('lease-holder')).toContainText(id.startsWith('redis-a') ? 'worker-1:' : 'worker-2:');
    }

    // Each source in words: down since when, and why; the one never read says so.
    await expect(banner).toContainText(/redis-a down since \d\d:\d\d:\d\d UTC, .* ago: Redis at 127.0.0.1:16395 refused the connection/);
    await expect(banner).toContainText(/redis-b down since \d\d:\d\d:\d\d UTC/);
    await expect(banner).toContainText('etcd-never down');
    await expect(banner).toContainText('marked stale');
    // Stale leases are counted as stale, and "held 0" is not shown as good news.
    await expect(page.getByTestId('counter-stale')).toContainText('2');
    await expect(page.getByTestId('counter-held')).toContainText('0');
    await expect(page.getByTestId('counter-held')).not.toHaveClass(/\bok\b/);
    await expect(page.getByTestId('counter-sources-down')).toContainText('3');
    // The live indicator: connected, and waiting for the sources (named).
    await expect(page.getByTestId('live-status')).toContainText('waiting for 3 sources that cannot be read: redis-a, redis-b, etcd-never');
    await expect(page.getByTestId('live-status')).toHaveClass(/waiting/);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(size.width);
    await screenshot(page, `outage-overview-${size.name}`);
    expect(errors).toEqual([]);
  });
}

for (const size of [
  { name: 'desktop', width: 1440, height: 900 },
  { name: 'phone', width: 390, height: 844 },
]) {
  test(`every source down (${size.name}): the alerts page still reads, says what is firing and fits the screen`, async ({ page }) => {
    const errors = watchConsole(page);
    await page.setViewportSize({ width: size.width, height: size.height });
    await page.goto(OUTAGE_URL + '/alerts');
    await expect(page.getByRole('heading', { level: 1, name: 'Alerts' })).toBeVisible();
    await expect(page.getByRole('region', { name: 'Firing now' })).toBeVisible();
    await expect(page.getByRole('table', { name: 'Alert rules' })).toContainText('Source down');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(size.width);
    await screenshot(page, `outage-alerts-${size.name}`);
    expect(errors).toEqual([]);
  });
}

test('a source down says since when and why on the sources page, and the lease page shows the last read, stale', async ({ page }) => {
  const errors = watchConsole(page);
  await page.goto(OUTAGE_URL + `/leases/${encodeURIComponent(leaseIds[0]!)}`);
  await expect(page.getByTestId('lease-holder')).toContainText('worker-1:');
  await expect(page.getByTestId('lease-last-read').locator('time')).toHaveClass(/warn-text/);
  await page.goto(OUTAGE_URL + '/sources');
  await expect(page.getByText('3 down')).toBeVisible();
  await screenshot(page, 'outage-sources-desktop');
  expect(errors).toEqual([]);
});
