// The console during an outage, as an on-call engineer opens it: every source unreachable.
// A server of its own (tests/e2e/serve.ts config) observes two Redis servers this spec starts
// and an etcd endpoint where nothing listens; the spec takes leases on both Redis servers,
// lets the server see them, then kills both. Opening the overview must then show (how soon is reported, not asserted),
// what is known: the down banner naming each source and why, the leases last seen, marked
// stale, counters that do not read as healthy, and a live indicator that says what it waits for.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { expect, test } from '@playwright/test';
import { OUTAGE_URL } from '../../playwright.config';
import { createLeaseClient } from '../../lib/lease';
import { startRedisServer, type RedisServer } from '../support/redis-servers';
import { ROOT } from '../support/services';
import { screenshot, watchConsole } from './support';

const REDIS_PORTS = [16395, 16396];
/** Nothing listens here: a source that was never readable (loopback, refused at once). */
const DEAD_ETCD = 'http://127.0.0.1:16397';

let server: ChildProcess;
let configDir: string;
const redis: RedisServer[] = [];
const leaseIds: string[] = [];

test.beforeAll(async () => {
  test.setTimeout(180_000);
  for (const port of REDIS_PORTS) redis.push(await startRedisServer(port));
  configDir = mkdtempSync(path.join(os.tmpdir(), 'leasehold-e2e-outage-'));
  const config = path.join(configDir, 'leasehold.config.json');
  writeFileSync(
    config,
    JSON.stringify({
      pollMs: 500,
      sources: [
        { name: 'redis-a', backend: 'redis', urls: [redis[0]!.url], match: ['jobs:*'] },
        { name: 'redis-b', backend: 'redis', urls: [redis[1]!.url], match: ['jobs:*'] },
        { name: 'etcd-never', backend: 'etcd', endpoints: [DEAD_ETCD], prefixes: ['/leases/'] },
      ],
    }),
  );
  server = spawn(process.execPath, ['--import', 'tsx', 'tests/e2e/serve.ts', 'config', new URL(OUTAGE_URL).port, config], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  for (let waited = 0; ; waited += 250) {
    if (waited > 170_000) throw new Error('the outage server did not become healthy');
    if (await fetch(`${OUTAGE_URL}/api/health`).then((r) => r.ok, () => false)) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  // A lease on each Redis, seen held by the server.
  for (const [index, instance] of redis.entries()) {
    const client = createLeaseClient({ backend: 'redis', urls: [instance.url] });
    const lease = await client.acquire('jobs:nightly-report', { holder: `worker-${index + 1}`, ttlMs: 600_000 });
    expect(lease).not.toBeNull();
    await client.close();
    leaseIds.push(`redis-${index === 0 ? 'a' : 'b'}/jobs:nightly-report`);
  }
  await expect
    .poll(async () => {
      const body = (await (await fetch(`${OUTAGE_URL}/api/v1/leases`)).json()) as { leases: { id: string; state: string }[] };
      return leaseIds.every((id) => body.leases.some((lease) => lease.id === id && lease.state === 'held'));
    }, { timeout: 30_000 })
    .toBe(true);
  // A server that has been running: its pages were served before (the first request after a
  // start loads the page's modules, which no engineer opening it at 3 a.m. waits for).
  expect((await fetch(`${OUTAGE_URL}/`)).status).toBe(200);
  await fetch(`${OUTAGE_URL}/api/v1/alerts?state=firing&limit=100`); // the navigation's count, asked by every page
  // The outage: both Redis servers gone; etcd never answered.
  for (const instance of redis) await instance.stop();
  await expect
    .poll(async () => {
      const body = (await (await fetch(`${OUTAGE_URL}/api/v1/sources`)).json()) as { sources: { status: string }[] };
      return body.sources.map((s) => s.status).join(',');
    }, { timeout: 30_000 })
    .toBe('down,down,down');
});

test.afterAll(async () => {
  for (const instance of redis) await instance.stop();
  if (server && server.exitCode === null) {
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    await exited;
  }
  if (configDir) rmSync(configDir, { recursive: true, force: true });
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
