// The sources page with a canary lease (the observing server's Redis source has one,
// tests/e2e/serve.ts): its card shows the canary's key, its renewals over the last minute, hour
// and day, and a chart of the last hour with a point per minute; the API says the same; the
// canary's key is not among the source's leases. Screenshots at 1440×900 and 390×844 go to
// test-results/screenshots/ (canary-desktop.png, canary-phone.png).
import { expect, test } from '@playwright/test';
import { screenshot, watchConsole } from './support';

type Canary = { key: string; calls: { renew: { minute: { count: number; p50Ms: number | null; p99Ms: number | null } } } };
type Source = { name: string; canary?: Canary | null };

async function canaried(request: import('@playwright/test').APIRequestContext): Promise<Source & { canary: Canary }> {
  let found: Source | undefined;
  await expect
    .poll(async () => {
      const body = (await (await request.get('/api/v1/sources')).json()) as { sources: Source[] };
      found = body.sources.find((s) => (s.canary?.calls.renew.minute.count ?? 0) >= 3);
      return Boolean(found);
    }, { timeout: 30_000 })
    .toBe(true);
  return found as Source & { canary: Canary };
}

for (const [name, viewport] of [
  ['desktop', { width: 1440, height: 900 }],
  ['phone', { width: 390, height: 844 }],
] as const) {
  test(`the sources page shows the canary's round trips and a chart of them (${name})`, async ({ page, request }) => {
    const errors = watchConsole(page);
    const source = await canaried(request);
    await page.setViewportSize(viewport);
    await page.goto('/sources');
    const card = page.locator(`[data-testid="source-card"][data-source="${source.name}"]`);
    const panel = card.getByTestId('canary-panel');
    await expect(panel).toContainText(source.canary.key);
    const minute = panel.locator('tr[data-window="minute"]');
    await expect(minute.locator('td').first()).not.toHaveText('0');
    const chart = panel.getByTestId('canary-chart');
    await expect(chart).toHaveAttribute('data-points', /^[1-9]\d*$/);
    // Drawn: the p99's dots show from the first minute on (a line of one point has no length).
    await expect(chart.locator('.recharts-line-dot').first()).toBeVisible();
    await expect(chart.locator('figcaption')).toContainText(/renewals? in the last hour: p50 [\d.]+ m?s, p99/);
    // Nothing wider than the screen.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
    await panel.scrollIntoViewIfNeeded();
    await screenshot(page, `canary-${name}`);
    // Leasehold's own probe is not one of the source's leases.
    const leases = (await (await request.get(`/api/v1/leases?source=${encodeURIComponent(source.name)}`)).json()) as { leases: { key: string }[] };
    expect(leases.leases.map((l) => l.key)).not.toContain(source.canary.key);
    expect(errors).toEqual([]);
  });
}
