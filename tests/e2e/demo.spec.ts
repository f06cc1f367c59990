// The embedded demo as a newcomer meets it: `npm start`'s server on an empty data directory,
// no services, no config. The fleet of 18 servers runs the weekly digest with faults on.
import { spawn, type ChildProcess } from 'node:child_process';
import { expect, test } from '@playwright/test';
import { DEMO_URL } from '../../playwright.config';
import { leaseIdPath } from '../../lib/domain/lease-id';
import { ROOT } from '../support/services';
import { screenshot, watchConsole } from './support';

const SCHEDULER = 'demo/pixly.leases/weekly-digest-scheduler';
type Failover = { leaseId: string; holder: string | null; previousHolder: string | null; token: string | null; previousToken: string | null; cause: string; gapMs: number | null };

let server: ChildProcess;
let healthyAt = 0;

test.beforeAll(async () => {
  test.setTimeout(180_000);
  server = spawn(process.execPath, ['--import', 'tsx', 'tests/e2e/serve.ts', 'demo', new URL(DEMO_URL).port], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  for (let waited = 0; ; waited += 250) {
    if (waited > 170_000) throw new Error('the demo server did not become healthy');
    const ok = await fetch(`${DEMO_URL}/api/health`).then((r) => r.ok, () => false);
    if (ok) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  healthyAt = Date.now();
});

test.afterAll(async () => {
  if (!server || server.exitCode !== null) return;
  const exited = new Promise((resolve) => server.once('exit', resolve));
  server.kill('SIGTERM');
  await exited;
});

test('the demo: the scheduler lease held within 60 s, a failover after a missed renewal with a higher token within 3 minutes, and a week of digests sent once each', async ({ page, request }) => {
  test.setTimeout(300_000);
  const errors = watchConsole(page);

  // 1. Within 60 s of health the overview shows the scheduler lease held.
  await page.goto('/?q=weekly-digest-scheduler');
  const scheduler = page.locator(`[data-testid="lease-row"][data-lease-id="${SCHEDULER}"]`);
  await expect(scheduler).toHaveAttribute('data-state', 'held', { timeout: Math.max(1_000, healthyAt + 60_000 - Date.now()) });
  await expect(scheduler.getByTestId('lease-holder')).toContainText('server-');
  await expect(page.getByTestId('demo-banner')).toContainText('This is the demo');
  await page.goto('/');
  await expect(page.getByTestId('lease-row').first()).toBeVisible();
  await screenshot(page, 'demo-overview');

  // 2. Within 3 minutes: a missed renewal (the lease expired with its holder paused) and a
  //    failover to another server with a higher token, on the failovers page too.
  let failover: Failover | undefined;
  await expect
    .poll(
      async () => {
        const body = (await (await request.get('/api/v1/failovers?since=1h')).json()) as { failovers: Failover[] };
        failover = body.failovers.find((f) => f.cause === 'expired' && f.previousHolder !== null && f.holder !== null && f.previousHolder !== f.holder);
        return failover !== undefined;
      },
      { timeout: Math.max(1_000, healthyAt + 180_000 - Date.now()), intervals: [1_000] },
    )
    .toBe(true);
  expect(BigInt(failover!.token!)).toBeGreaterThan(BigInt(failover!.previousToken!));
  const events = (await (await request.get(`/api/v1/leases/${encodeURIComponent(failover!.leaseId)}/events`)).json()) as { events: { type: string }[] };
  expect(events.events.some((e) => e.type === 'expired')).toBe(true);
  await page.goto('/failovers');
  await expect(page.getByText(failover!.holder!.split(':')[0]!).first()).toBeVisible({ timeout: 10_000 });
  await screenshot(page, 'demo-failovers');
  // The lease that changed hands, on its own page: the tokens rising, renewals, who held it when.
  await page.goto(`/leases/${leaseIdPath(failover!.leaseId)}?range=15m`);
  await expect.poll(async () => Number(await page.getByTestId('token-chart').getAttribute('data-points')), { timeout: 15_000 }).toBeGreaterThanOrEqual(2);
  await expect(page.getByTestId('holder-timeline')).toBeVisible();
  await screenshot(page, 'demo-lease');

  // 3. After a week's run: every user's digest sent, none twice.
  await page.goto('/digest');
  const users = Number((await page.getByTestId('digest-users').locator('.value').textContent({ timeout: 10_000 }))!.replace(/,/g, ''));
  expect(users).toBeGreaterThan(1_000);
  await expect
    .poll(async () => Number(((await page.getByTestId('digest-sent').locator('.value').textContent()) ?? '0').replace(/,/g, '')), { timeout: 150_000, intervals: [500] })
    .toBe(users);
  await expect(page.getByTestId('digest-duplicates').locator('.value')).toHaveText('0');
  await screenshot(page, 'demo-digest');
  // The paused scheduler's late write was turned away by the fenced store, at least once.
  await expect.poll(async () => Number(await page.getByTestId('digest-stale-rejected').locator('.value').textContent()), { timeout: 60_000 }).toBeGreaterThanOrEqual(1);
  expect(errors).toEqual([]);
});
