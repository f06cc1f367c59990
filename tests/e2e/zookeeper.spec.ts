// A ZooKeeper lease page, read from real Curator participants (an InterProcessMutex holder and
// a waiter) by the observing server: holder with its session, czxid as the token, no expiry
// (held while the session lives), the waiter in line; readable whole at desktop and phone width.
import { expect, test, type Page } from '@playwright/test';
import { startCuratorHolder, type CuratorHolder } from '../support/curator';
import { testServices } from '../support/services';
import { untilChildren } from '../support/zookeeper-layouts';
import { OBSERVED } from './observed';
import { screenshot, watchConsole } from './support';

const services = testServices();
const PATH = `${OBSERVED.zookeeperPath}/locks/weekly-digest`;
const ID = `${OBSERVED.zookeeperSource}/${PATH}`;
let holders: CuratorHolder[] = [];

test.beforeAll(async () => {
  test.setTimeout(60_000);
  const first = startCuratorHolder({ connect: services.zookeeper, recipe: 'mutex', path: PATH, id: 'digest-1' });
  holders = [first];
  await first.saw('HELD');
  holders.push(startCuratorHolder({ connect: services.zookeeper, recipe: 'mutex', path: PATH, id: 'digest-2' }));
  await untilChildren(services.zookeeper, PATH, 2);
});
test.afterAll(async () => {
  await Promise.all(holders.map((h) => h.stop()));
});

async function openLease(page: Page) {
  await page.goto(`/leases/${encodeURIComponent(ID)}`);
  await expect(page.getByTestId('lease-state')).toHaveAttribute('data-state', 'held', { timeout: 15_000 });
  await expect(page.getByTestId('lease-candidates').locator('li')).toHaveCount(1, { timeout: 15_000 });
}

for (const [name, size] of [['desktop', { width: 1280, height: 900 }], ['phone', { width: 390, height: 844 }]] as const) {
  test(`a Curator lock's page at ${name} width: holder and session, czxid token, no expiry, the waiter in line`, async ({ page, request }) => {
    const errors = watchConsole(page);
    await page.setViewportSize(size);
    type Api = { holder: string; token: string; candidates: { holder: string }[] };
    let api: Api | undefined;
    await expect
      .poll(async () => {
        const response = await request.get(`/api/v1/leases/${encodeURIComponent(ID)}`);
        api = response.ok() ? ((await response.json()) as Api) : undefined;
        return api?.candidates.length;
      }, { timeout: 15_000 })
      .toBe(1);
    if (!api) throw new Error('unreachable');
    expect(api.holder).toMatch(/^127\.0\.[01]\.1 \(session 0x[0-9a-f]+\)$/);
    expect(BigInt(api.token)).toBeGreaterThan(0n);
    await openLease(page);
    await expect(page.getByTestId('lease-holder')).toHaveText(api.holder);
    await expect(page.getByTestId('lease-token')).toContainText(api.token);
    await expect(page.getByText('no expiry: held while the session lives')).toBeVisible();
    await expect(page.getByTestId('lease-candidates')).toContainText(api.candidates[0]!.holder);
    expect(await page.evaluate(() => document.documentElement.scrollWidth), 'the page is wider than the screen').toBeLessThanOrEqual(size.width);
    await screenshot(page, `zookeeper-lease-${name}`);
    expect(errors).toEqual([]);
  });
}

test('the sources page shows the ZooKeeper ensemble as its four-letter words describe it', async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto('/sources');
  const card = page.locator('section, article, div').filter({ hasText: 'ZooKeeper ensemble' }).last();
  await expect(card).toBeVisible({ timeout: 15_000 });
  await expect(card).toContainText('standalone');
  await expect(card).toContainText(services.zookeeper);
});
