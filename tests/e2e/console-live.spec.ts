// The console against a server observing the test Redis and etcd (tests/e2e/serve.ts
// observing): leases taken by lib/lease and by holder processes that are killed, seen the
// way an on-call engineer sees them, in Chromium.
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { createLeaseClient, type LeaseClientOptions } from '../../lib/lease';
import { startRedisServer } from '../support/redis-servers';
import { ROOT, testServices } from '../support/services';
import { OBSERVED } from './observed';
import { screenshot, watchConsole } from './support';

const services = testServices();
const redisLease: LeaseClientOptions = { backend: 'redis', urls: [services.redisUrl] };
const HOLDER = path.join(ROOT, 'tests', 'support', 'lease-holder.ts');
const children: ChildProcess[] = [];
test.afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

/** A lease holder in its own OS process; resolves `held` with its holder name and token. */
function holder(key: string, name: string, options: { ttlMs: number; renewEveryMs: number; lease?: LeaseClientOptions }) {
  const child = fork(HOLDER, [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, LEASEHOLD_HOLDER: JSON.stringify({ lease: options.lease ?? redisLease, key, holder: name, ttlMs: options.ttlMs, renewEveryMs: options.renewEveryMs }) },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  children.push(child);
  const held = new Promise<{ holder: string; token: string }>((resolve) => child.on('message', (m: { type: string; holder: string; token: string }) => m.type === 'held' && resolve(m)));
  return { child, held };
}

const leasePath = (id: string) => `/leases/${encodeURIComponent(id)}`;
const row = (page: Page, id: string) => page.locator(`[data-testid="lease-row"][data-lease-id="${id}"]`);

async function openLive(page: Page, url: string) {
  await page.goto(url);
  await expect(page.getByRole('status').filter({ hasText: 'Live' })).toBeVisible({ timeout: 10_000 });
}

test('a lease taken by lib/lease appears on the overview with its holder within 2 s', async ({ page }) => {
  const errors = watchConsole(page);
  await openLive(page, '/');
  const client = createLeaseClient(redisLease);
  const key = `${OBSERVED.redisPrefix}console-appears`;
  try {
    const lease = (await client.acquire(key, { holder: 'worker-7', ttlMs: 30_000 }))!;
    const taken = Date.now();
    const shown = row(page, `${OBSERVED.redisSource}/${key}`);
    await expect(shown.getByTestId('lease-holder')).toHaveText(lease.holder, { timeout: 2_000 });
    expect(Date.now() - taken).toBeLessThan(2_000);
    await expect(shown.getByTestId('lease-token')).toHaveText(lease.token.toString());
    await expect(shown).toHaveAttribute('data-state', 'held');
    await screenshot(page, 'overview-live');
    await client.release(lease);
  } finally {
    await client.close();
  }
  expect(errors).toEqual([]);
});

test('a killed holder and a takeover show as a failover on the overview, in the timeline and on the failovers page', async ({ page }) => {
  const errors = watchConsole(page);
  const key = `${OBSERVED.redisPrefix}console-failover`;
  const id = `${OBSERVED.redisSource}/${key}`;
  const first = holder(key, 'first', { ttlMs: 2_000, renewEveryMs: 400 });
  const a = await first.held;
  await openLive(page, '/');
  await expect(row(page, id).getByTestId('lease-holder')).toHaveText(a.holder, { timeout: 5_000 });

  // The second waits for the key; the first dies without releasing.
  const second = holder(key, 'second', { ttlMs: 2_000, renewEveryMs: 400 });
  first.child.kill('SIGKILL');
  const b = await second.held;
  expect(BigInt(b.token)).toBeGreaterThan(BigInt(a.token));

  // Overview: the new holder, its higher token, and the change of hands counted once (an
  // expiry and another holder's grant are two events, one change), live from the stream.
  await expect(row(page, id).getByTestId('lease-holder')).toHaveText(b.holder, { timeout: 5_000 });
  await expect(row(page, id).getByTestId('lease-token')).toHaveText(b.token);
  await expect(row(page, id).getByTestId('lease-changes')).toHaveText('1');
  await page.waitForTimeout(1_000); // the stream's events are applied twice a second: nothing more comes
  await expect(row(page, id).getByTestId('lease-changes')).toHaveText('1');

  // The lease's holder timeline: two holders, the failover marked.
  await page.goto(leasePath(id));
  await expect(page.getByTestId('lease-holder')).toHaveText(b.holder, { timeout: 5_000 });
  const timeline = page.getByTestId('holder-timeline');
  await expect(timeline.getByTestId('timeline-failover').first()).toBeVisible({ timeout: 5_000 });
  await expect(timeline.getByTestId('timeline-segment')).toHaveCount(2);
  await expect(page.getByTestId('event-table')).toContainText('expired');
  await screenshot(page, 'lease-detail-failover');

  // The failovers page: the change of holder with both tokens.
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Failovers' }).click();
  const failover = page.locator(`[data-testid="failover-row"][data-lease-id="${id}"]`).first();
  await expect(failover).toBeVisible({ timeout: 5_000 });
  await expect(failover).toContainText(a.holder);
  await expect(failover).toContainText(b.holder);
  await expect(failover).toContainText(b.token);
  await screenshot(page, 'failovers');
  // The export says the same, as CSV.
  const csv = await page.request.get(`/api/v1/failovers.csv?since=1h&q=${encodeURIComponent(key)}`);
  expect(csv.headers()['content-type']).toContain('text/csv');
  const lines = (await csv.text()).trim().split('\r\n');
  expect(lines.length).toBeGreaterThanOrEqual(2);
  expect(lines.slice(1).some((line) => line.includes(id) && line.includes(a.holder) && line.includes(b.holder))).toBe(true);
  expect(errors).toEqual([]);
});

test('the token chart and the renewal chart show the points of a lease that renewed several times', async ({ page }) => {
  const errors = watchConsole(page);
  const key = `${OBSERVED.redisPrefix}console-renewing`;
  const id = `${OBSERVED.redisSource}/${key}`;
  const steady = holder(key, 'steady', { ttlMs: 3_000, renewEveryMs: 500 });
  await steady.held;
  await openLive(page, leasePath(id));
  await expect(page.getByTestId('lease-holder')).toContainText('steady', { timeout: 5_000 });
  await expect.poll(async () => Number(await page.getByTestId('renewal-chart').getAttribute('data-points')), { timeout: 15_000 }).toBeGreaterThanOrEqual(4);
  await expect.poll(async () => Number(await page.getByTestId('token-chart').getAttribute('data-points')), { timeout: 5_000 }).toBeGreaterThanOrEqual(1);
  await expect(page.getByTestId('renewal-chart').locator('svg').first()).toBeVisible();
  await expect(page.getByTestId('token-chart').locator('svg').first()).toBeVisible();
  await screenshot(page, 'lease-detail-renewals');
  expect(errors).toEqual([]);
});

test('a stopped source marks its leases stale, and they come back when it answers again', async ({ page }) => {
  test.setTimeout(90_000);
  const errors = watchConsole(page);
  const redis = await startRedisServer(OBSERVED.flakyPort);
  const client = createLeaseClient({ backend: 'redis', urls: [redis.url] });
  try {
    const key = `${OBSERVED.flakyPrefix}console-stale`;
    const id = `${OBSERVED.flakySource}/${key}`;
    const lease = (await client.acquire(key, { holder: 'far-away', ttlMs: 120_000 }))!;
    await openLive(page, `/?source=${OBSERVED.flakySource}`);
    await expect(row(page, id).getByTestId('lease-holder')).toHaveText(lease.holder, { timeout: 10_000 });
    await expect(row(page, id)).toHaveAttribute('data-stale', 'false');

    // Frozen, not gone: reads time out, the source turns down, its leases stale.
    redis.process.kill('SIGSTOP');
    await expect(row(page, id)).toHaveAttribute('data-stale', 'true', { timeout: 30_000 });
    await expect(row(page, id)).toContainText('stale');
    await expect(page.locator(`[data-testid="source-group"][data-source="${OBSERVED.flakySource}"]`)).toContainText('source down');
    await expect(page.getByTestId('counter-sources-down')).toContainText('1');
    await screenshot(page, 'overview-source-down');

    redis.process.kill('SIGCONT');
    await expect(row(page, id)).toHaveAttribute('data-stale', 'false', { timeout: 20_000 });
    await expect(row(page, id).getByTestId('lease-holder')).toHaveText(lease.holder);
    await client.release(lease);
  } finally {
    redis.process.kill('SIGCONT');
    await client.close();
    await redis.stop();
  }
  // The browser's own failed requests while the source was down are not page errors.
  expect(errors).toEqual([]);
});

test('a change made after the list was read and before the stream connected still shows, without reading the list again', async ({ page, request }) => {
  const errors = watchConsole(page);
  const client = createLeaseClient(redisLease);
  const key = `${OBSERVED.redisPrefix}console-between`;
  const id = `${OBSERVED.redisSource}/${key}`;
  const first = (await client.acquire(key, { holder: 'before-the-stream', ttlMs: 60_000 }))!;
  // Hold the page's stream back until the change below has happened.
  let letStreamThrough!: () => void;
  const streamMayGo = new Promise<void>((resolve) => (letStreamThrough = resolve));
  await page.route('**/api/v1/stream*', async (route) => {
    await streamMayGo;
    await route.continue();
  });
  let listReads = 0;
  page.on('request', (r) => {
    if (new URL(r.url()).pathname === '/api/v1/leases') listReads++;
  });
  try {
    await page.goto('/');
    await expect(row(page, id).getByTestId('lease-holder')).toHaveText(first.holder, { timeout: 10_000 });
    await client.release(first);
    const second = (await client.acquire(key, { holder: 'while-connecting', ttlMs: 60_000 }))!;
    // The server has it (the list says so) before the page's stream connects.
    await expect
      .poll(async () => ((await (await request.get(`/api/v1/leases?q=console-between`)).json()) as { leases: { holder: string | null }[] }).leases[0]?.holder, { timeout: 5_000 })
      .toBe(second.holder);
    await expect(row(page, id).getByTestId('lease-holder')).toHaveText(first.holder);
    letStreamThrough();
    await expect(row(page, id).getByTestId('lease-holder')).toHaveText(second.holder, { timeout: 5_000 });
    await expect(row(page, id).getByTestId('lease-token')).toHaveText(second.token.toString());
    // Brought up by the stream resuming after the list's position, not by reading 5 MB again.
    expect(listReads).toBe(1);
    await client.release(second);
  } finally {
    letStreamThrough();
    await client.close();
  }
  expect(errors).toEqual([]);
});

test('nothing on the overview moves while it loads and live data arrives', async ({ page }) => {
  const errors = watchConsole(page);
  // Chromium's Layout Instability API: every shift of visible content not caused by input,
  // except rows moving inside the list (a lease joining a sorted list moves the ones below it).
  await page.addInitScript(() => {
    const w = window as unknown as { __shifts: { value: number; nodes: string[] }[] };
    w.__shifts = [];
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries() as unknown as { value: number; hadRecentInput: boolean; sources?: { node?: Node }[] }[]) {
        const nodes = (entry.sources ?? []).map((s) => s.node as Element | undefined);
        const inList = nodes.length > 0 && nodes.every((node) => node?.closest?.('.vtable-body [role="row"]'));
        if (!entry.hadRecentInput && !inList) w.__shifts.push({ value: entry.value, nodes: nodes.map((node) => node?.outerHTML?.slice(0, 120) ?? '?') });
      }
    }).observe({ type: 'layout-shift', buffered: true });
  });
  const client = createLeaseClient(redisLease);
  const keys = ['console-still-a', 'console-still-b'].map((k) => `${OBSERVED.redisPrefix}${k}`);
  const a = (await client.acquire(keys[0]!, { holder: 'steady-a', ttlMs: 60_000 }))!;
  try {
    await openLive(page, '/');
    await expect(row(page, `${OBSERVED.redisSource}/${keys[0]}`)).toBeVisible({ timeout: 10_000 });
    // Live changes: a new lease joins the list, another changes hands.
    const b = (await client.acquire(keys[1]!, { holder: 'steady-b', ttlMs: 60_000 }))!;
    await expect(row(page, `${OBSERVED.redisSource}/${keys[1]}`)).toBeVisible({ timeout: 5_000 });
    await client.release(a);
    const a2 = (await client.acquire(keys[0]!, { holder: 'steady-a2', ttlMs: 60_000 }))!;
    await expect(row(page, `${OBSERVED.redisSource}/${keys[0]}`).getByTestId('lease-holder')).toHaveText(a2.holder, { timeout: 5_000 });
    await page.waitForTimeout(1_500); // countdowns tick, counters change
    const shifts = await page.evaluate(() => (window as unknown as { __shifts: { value: number; nodes: string[] }[] }).__shifts);
    const total = shifts.reduce((sum, s) => sum + s.value, 0);
    expect(total, JSON.stringify(shifts, null, 1)).toBeLessThan(0.001);
    await client.release(a2);
    await client.release(b);
  } finally {
    await client.close();
  }
  expect(errors).toEqual([]);
});

test('the overview can be worked with the keyboard alone: search, then open a lease', async ({ page }) => {
  const errors = watchConsole(page);
  const client = createLeaseClient(redisLease);
  const key = `${OBSERVED.redisPrefix}console-keyboard`;
  const id = `${OBSERVED.redisSource}/${key}`;
  const lease = (await client.acquire(key, { holder: 'typed-to', ttlMs: 60_000 }))!;
  const focused = () => page.evaluate(() => {
    const element = document.activeElement as HTMLElement | null;
    return { text: element?.textContent ?? '', tag: element?.tagName ?? '', outline: element ? getComputedStyle(element).outlineStyle : '' };
  });
  try {
    await openLive(page, '/');
    await expect(row(page, id)).toBeVisible({ timeout: 10_000 });
    // Tab from the top of the page to the search box.
    let steps = 0;
    const search = page.getByLabel('Search leases and holders');
    while (!(await search.evaluate((element) => element === document.activeElement))) {
      await page.keyboard.press('Tab');
      expect(++steps, 'Tab never reached the search box').toBeLessThan(40);
    }
    expect((await focused()).outline).not.toBe('none'); // the focus is visible
    await page.keyboard.type('console-keyboard');
    await expect(page.getByTestId('lease-row')).toHaveCount(1, { timeout: 5_000 });
    // On through the filters to the lease's link, and open it.
    steps = 0;
    while ((await focused()).text !== key) {
      await page.keyboard.press('Tab');
      expect(++steps, 'Tab never reached the lease').toBeLessThan(40);
    }
    expect((await focused()).tag).toBe('A');
    await page.keyboard.press('Enter');
    await expect(page).toHaveURL(new RegExp(`/leases/${encodeURIComponent(id).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    await expect(page.getByTestId('lease-holder')).toContainText(lease.holder, { timeout: 5_000 });
    await client.release(lease);
  } finally {
    await client.close();
  }
  expect(errors).toEqual([]);
});

test('filters and deep links survive a reload', async ({ page }) => {
  const errors = watchConsole(page);
  const client = createLeaseClient(redisLease);
  const key = `${OBSERVED.redisPrefix}console-filtered`;
  const lease = (await client.acquire(key, { holder: 'filter-me', ttlMs: 60_000 }))!;
  try {
    await openLive(page, '/');
    await page.getByLabel('Source').selectOption(OBSERVED.redisSource);
    await page.getByLabel('State').selectOption('held');
    await page.getByLabel('Search leases and holders').fill('filter-me');
    await page.getByLabel('Sort').selectOption('token');
    await expect(page.getByTestId('lease-row')).toHaveCount(1, { timeout: 5_000 });
    await expect(page).toHaveURL(/source=redis-e2e/);
    await page.reload();
    await expect(page.getByLabel('Source')).toHaveValue(OBSERVED.redisSource);
    await expect(page.getByLabel('State')).toHaveValue('held');
    await expect(page.getByLabel('Search leases and holders')).toHaveValue('filter-me');
    await expect(page.getByLabel('Sort')).toHaveValue('token');
    await expect(page.getByTestId('lease-row')).toHaveCount(1, { timeout: 5_000 });
    await expect(page.getByTestId('lease-row').getByTestId('lease-holder')).toHaveText(lease.holder);

    // A lease's page keeps its time range through a reload, and the range travels with the navigation.
    await page.goto(`${leasePath(`${OBSERVED.redisSource}/${key}`)}?range=6h`);
    await expect(page.getByLabel('Time range')).toHaveValue('6h');
    await page.reload();
    await expect(page.getByLabel('Time range')).toHaveValue('6h');
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Failovers' }).click();
    await expect(page).toHaveURL(/\/failovers\?range=6h/);
    await expect(page.getByLabel('Time range')).toHaveValue('6h');
  } finally {
    await client.release(lease);
    await client.close();
  }
  expect(errors).toEqual([]);
});

test('a holder that restarts and takes its lease back is told apart from another node taking over', async ({ page }) => {
  const errors = watchConsole(page);
  const key = `${OBSERVED.redisPrefix}console-restart`;
  const id = `${OBSERVED.redisSource}/${key}`;
  const before = holder(key, 'api-7', { ttlMs: 1_500, renewEveryMs: 300 });
  const a = await before.held;
  await openLive(page, `/?q=${encodeURIComponent('console-restart')}`);
  await expect(row(page, id).getByTestId('lease-holder')).toHaveText(a.holder, { timeout: 5_000 });
  // The node dies and comes back under the same name: a new lib/lease instance.
  before.child.kill('SIGKILL');
  const b = await holder(key, 'api-7', { ttlMs: 1_500, renewEveryMs: 300 }).held;
  expect(b.holder).not.toBe(a.holder);
  expect(b.holder.split(':')[0]).toBe('api-7');
  await expect(row(page, id).getByTestId('lease-holder')).toHaveText(b.holder, { timeout: 5_000 });
  await expect(row(page, id).getByTestId('lease-changes')).toHaveText('1');
  await expect(page.getByTestId('counter-failovers-last-hour')).toContainText('restart', { timeout: 5_000 });

  await page.goto(`/failovers?q=${encodeURIComponent('console-restart')}`);
  const failover = page.locator(`[data-testid="failover-row"][data-lease-id="${id}"]`);
  await expect(failover).toHaveCount(1, { timeout: 5_000 });
  await expect(failover.getByTestId('failover-restart')).toHaveText('same node, restarted');
  await page.getByLabel('Taken by').selectOption('other');
  await expect(failover).toHaveCount(0);
  await page.getByLabel('Taken by').selectOption('restart');
  await expect(failover).toHaveCount(1);
  await expect(page).toHaveURL(/change=restart/);
  // A lock: shown among locks, not among leader elections.
  await page.getByLabel('Lease kind').selectOption('election');
  await expect(failover).toHaveCount(0);
  await page.getByLabel('Lease kind').selectOption('lock');
  await expect(failover).toHaveCount(1);
  await expect(page).toHaveURL(/kind=lock/);
  const api = (await (await page.request.get('/api/v1/failovers?since=15m')).json()) as { failovers: { leaseId: string; restart: boolean; kind: string }[] };
  expect(api.failovers.filter((f) => f.leaseId === id)).toEqual([expect.objectContaining({ restart: true, kind: 'lock' })]);
  expect(errors).toEqual([]);
});

test('the lease page: its range defaults to what was observed, its last read moves with every read, its event filter offers what can occur', async ({ page }) => {
  const errors = watchConsole(page);
  const client = createLeaseClient(redisLease);
  const key = `${OBSERVED.redisPrefix}console-range`;
  const id = `${OBSERVED.redisSource}/${key}`;
  // Held for two minutes and never renewed: nothing about the lease changes while the page is open.
  const lease = (await client.acquire(key, { holder: 'quiet', ttlMs: 120_000 }))!;
  try {
    await expect.poll(async () => (await page.request.get(`/api/v1/leases/${encodeURIComponent(id)}`)).status(), { timeout: 5_000 }).toBe(200);
    await openLive(page, leasePath(id));
    await expect(page.getByTestId('lease-holder')).toHaveText(lease.holder);
    // First seen seconds ago: the shortest range, not the last hour.
    await expect(page.getByLabel('Time range')).toHaveValue('5m');
    expect(new URL(page.url()).searchParams.get('range')).toBeNull();
    // The source is read twice a second: "last read" stays within a couple of seconds.
    await page.waitForTimeout(4_000);
    await expect(page.getByTestId('lease-last-read')).toHaveText(/^(just now|[12](\.\d)? s ago)$/);
    // The event types a lease's events can hold today; none that cannot occur yet.
    const types = page.getByRole('group', { name: /Event types shown/ }).getByRole('checkbox');
    await expect(types).toHaveCount(7);
    await expect(page.getByRole('group', { name: /Event types shown/ })).not.toContainText('force_expired');
    // Choosing the hour keeps it in the URL; the default is not written there.
    await page.getByLabel('Time range').selectOption('1h');
    await expect(page).toHaveURL(/range=1h/);
    await page.getByLabel('Time range').selectOption('5m');
    await expect(page).not.toHaveURL(/range=/);
  } finally {
    await client.release(lease);
    await client.close();
  }
  expect(errors).toEqual([]);
});

test('bad and unknown lease ids get a page that says what is wrong', async ({ page }) => {
  await page.goto(leasePath(`${OBSERVED.redisSource}/no-such-lease`));
  await expect(page.getByRole('main')).toContainText('not known', { timeout: 10_000 });
  await expect(page.getByRole('main').getByRole('link', { name: 'Back to the overview' })).toBeVisible();
  await screenshot(page, 'lease-unknown');
  await page.goto('/leases/no-slash-here');
  await expect(page.getByRole('main')).toContainText('not a lease id');
});

test('every page in both themes, with no console errors', async ({ page }) => {
  const errors = watchConsole(page);
  const client = createLeaseClient({ backend: 'etcd', endpoints: services.etcdEndpoints });
  const key = `${OBSERVED.etcdPrefix}console-themes`;
  const lease = (await client.acquire(key, { holder: 'scheduler-1', ttlMs: 20_000 }))!;
  try {
    for (const theme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: theme });
      await page.goto('/');
      await page.evaluate((t) => localStorage.setItem('leasehold-theme', t), theme);
      for (const [name, url] of [
        ['overview', '/'],
        ['lease', leasePath(`${OBSERVED.etcdSource}/${key}`)],
        ['failovers', '/failovers'],
        ['sources', '/sources'],
      ] as const) {
        await page.goto(url);
        await expect(page.locator('html')).toHaveAttribute('data-theme', theme);
        await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
        await expect(page.locator('[aria-busy="true"]')).toHaveCount(0, { timeout: 10_000 }); // loaded, not skeletons
        await screenshot(page, `${name}-${theme}`);
      }
    }
    // The theme switch in the sidebar works and is kept.
    await page.getByRole('button', { name: 'Switch to the light theme' }).click();
    await expect(page.locator('html')).toHaveAttribute('data-theme', 'light');
    await page.reload();
    await expect(page.locator('html')).toHaveAttribute('data-theme', 'light');
  } finally {
    await client.release(lease);
    await client.close();
  }
  expect(errors).toEqual([]);
});

// Hydration under a slow, uneven network: the scripts of the page arrive late and in any order
// (a random 0-1 s delay each), so React hydrates while some of them are still on the way. The
// theme script once made 7 of 80 such loads fail to hydrate (React #418, components/theme-script.ts);
// any such failure is a console error here. With that defect put back, this test failed in each of
// two runs (5 and 1 failed loads of 24).
test('pages hydrate when their scripts arrive late and out of order', async ({ page }) => {
  test.setTimeout(120_000);
  const errors = watchConsole(page);
  await page.route('**/_next/static/**', async (route) => {
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 1_000));
    await route.continue();
  });
  // (With a route set, Chromium's cache is off: every script is fetched, and delayed, each time.)
  for (let load = 0; load < 10; load++) {
    for (const url of ['/', '/failovers']) {
      await page.goto(url, { waitUntil: 'commit' });
      await expect(page.getByRole('heading', { level: 1 })).toBeVisible({ timeout: 15_000 });
      await expect(page.getByRole('status').filter({ hasText: 'Live' })).toBeVisible({ timeout: 15_000 }); // hydrated: its effects ran
    }
  }
  expect(errors).toEqual([]);
});
