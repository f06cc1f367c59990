// The overview of a list too large to keep whole in a browser (more than 10,000 leases): a
// server of its own observes a Redis server of its own holding 12,000 leases. The page reads a
// page at a time (GET /api/v1/leases?sort=&cursor=), more as the rows scroll to their end,
// searches on the server, reads its page again every few seconds, and its live stream carries
// only the sources' messages (?types=source).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import Redis from 'ioredis';
import { LARGE_URL } from '../../playwright.config';
import { startRedisServer, type RedisServer } from '../support/redis-servers';
import { ROOT } from '../support/services';
import { screenshot, watchConsole } from './support';

const LEASES = 12_000;
let redisServer: RedisServer | undefined;
let redis: Redis | undefined;
let server: ChildProcess | undefined;
let configDir: string | undefined;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
async function until(what: string, check: () => Promise<boolean>, timeoutMs: number) {
  const started = performance.now();
  while (!(await check().catch(() => false))) {
    if (performance.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await sleep(250);
  }
}
const total = async () => ((await (await fetch(`${LARGE_URL}/api/v1/leases?limit=1`)).json()) as { total: number }).total;

test.beforeAll(async () => {
  test.setTimeout(240_000);
  redisServer = await startRedisServer(16402, ['--notify-keyspace-events', 'KEA']);
  redis = new Redis(redisServer.url);
  for (let i = 0; i < LEASES; i += 1_000) {
    const pipeline = redis.pipeline();
    for (let j = i; j < i + 1_000; j++) pipeline.set(`orders:${String(j).padStart(5, '0')}`, `worker-${j % 37}`, 'PX', 1_800_000);
    await pipeline.exec();
  }
  configDir = mkdtempSync(path.join(os.tmpdir(), 'leasehold-large-'));
  const config = path.join(configDir, 'leasehold.config.json');
  writeFileSync(config, JSON.stringify({ pollMs: 1_000, sources: [{ name: 'redis-big', backend: 'redis', urls: [redisServer.url], match: ['orders:*'] }] }));
  server = spawn(process.execPath, ['--import', 'tsx', 'tests/e2e/serve.ts', 'config', new URL(LARGE_URL).port, config], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  await until('the large server healthy', async () => (await fetch(`${LARGE_URL}/api/health`)).ok, 170_000);
  await until(`the ${LEASES} leases seen`, async () => (await total()) === LEASES, 60_000);
});

test.afterAll(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((resolve) => server!.once('exit', resolve));
    server.kill('SIGTERM');
    await exited;
  }
  redis?.disconnect();
  await redisServer?.stop();
  if (configDir) rmSync(configDir, { recursive: true, force: true });
});

const count = (page: Page) => page.getByTestId('lease-count');
const row = (page: Page, key: string) => page.locator(`[data-testid="lease-row"][data-lease-id="redis-big/${key}"]`);

for (const size of [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
]) {
  test(`12,000 leases (${size.name}): a page at a time, more on scrolling, searched by the server, the stream carrying sources only`, async ({ page }) => {
    const errors = watchConsole(page);
    await page.setViewportSize({ width: size.width, height: size.height });
    const streams: string[] = [];
    const listReads: string[] = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.pathname === '/api/v1/stream') streams.push(url.search);
      if (url.pathname === '/api/v1/leases') listReads.push(url.search);
    });
    await page.goto(`${LARGE_URL}/`);
    // The first read holds 10,000 of them: then pages of 500, and the counters are the server's, of all 12,000.
    await expect(count(page)).toHaveText(/^500\+ of 12,000 matching, 12,000 leases/, { timeout: 15_000 });
    await expect(page.getByTestId('counter-held')).toContainText('12,000');
    await expect(row(page, 'orders:00000')).toBeVisible();
    // The stream, once it knows, carries the sources' messages alone.
    await expect.poll(() => streams.at(-1) ?? '').toContain('types=source');

    // Scrolling to the end reads the next page.
    await page.locator('.vtable-body').evaluate((box) => box.scrollTo(0, box.scrollHeight));
    await expect(count(page)).toHaveText(/^1,000\+ of 12,000 matching/, { timeout: 10_000 });
    expect(listReads.some((search) => search.includes('cursor='))).toBe(true);

    // A search is answered by the server, over all of them.
    await page.getByRole('searchbox').fill('orders:0499');
    await expect(count(page)).toHaveText(/^10 of 10 matching, 12,000 leases/, { timeout: 10_000 });
    await expect(row(page, 'orders:04990')).toBeVisible();
    expect(listReads.some((search) => /q=orders%3A0499/.test(search))).toBe(true);

    // A change in Redis shows without the stream: the page is read again every few seconds.
    const holder = `moved-${size.name}`;
    await redis!.set('orders:04991', holder, 'PX', 1_800_000);
    await expect(row(page, 'orders:04991').getByTestId('lease-holder')).toContainText(holder, { timeout: 15_000 });

    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(size.width);
    // Back to every lease: the pages read before, at once.
    await page.getByRole('searchbox').fill('');
    await expect(count(page)).toHaveText(/^1,000\+ of 12,000 matching/, { timeout: 10_000 });
    await page.locator('.vtable-body').evaluate((box) => box.scrollTo(0, 0));
    await screenshot(page, `large-overview-${size.name}`);
    expect(errors).toEqual([]);
  });
}
