// The embedded demo as a newcomer meets it: `npm start`'s server on an empty data directory,
// no services, no config. The fleet of 18 servers runs the weekly digest with faults on.
import { spawn, type ChildProcess } from 'node:child_process';
import { expect, test } from '@playwright/test';
import { DEMO_URL } from '../../playwright.config';
import { leaseIdPath } from '../../lib/domain/lease-id';
import { ROOT } from '../support/services';
import { credentials } from './credentials';
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

test('the demo: the scheduler lease held within 60 s, a failover after a missed renewal with a higher token within 3 minutes, its alerts in the signed webhook inbox, and a week of digests sent once each', async ({ page, request }) => {
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
  // The same missed renewal and failover reached the demo's own webhook inbox, signed.
  type InboxMessage = { verified: boolean; type: string | null; rule: string | null; leaseId: string | null };
  await expect
    .poll(
      async () => {
        const { messages } = (await (await request.get('/api/v1/demo/inbox')).json()) as { messages: InboxMessage[] };
        return messages.filter((m) => m.verified && m.type === 'alert.firing' && m.leaseId === failover!.leaseId).map((m) => m.rule);
      },
      { timeout: 15_000, intervals: [500] },
    )
    .toEqual(expect.arrayContaining(['missed_renewal', 'failover']));
  // The paused scheduler woke still believing it led (its servers report what they believe):
  // split_brain, naming it and the backend's new holder, signed, in the same inbox.
  let splitBrain: (InboxMessage & { summary: string | null }) | undefined;
  await expect
    .poll(
      async () => {
        const { messages } = (await (await request.get('/api/v1/demo/inbox')).json()) as { messages: (InboxMessage & { summary: string | null })[] };
        splitBrain = messages.find((m) => m.verified && m.type === 'alert.firing' && m.rule === 'split_brain' && m.leaseId === SCHEDULER);
        return splitBrain !== undefined;
      },
      { timeout: Math.max(15_000, healthyAt + 180_000 - Date.now()), intervals: [1_000] },
    )
    .toBe(true);
  expect(splitBrain!.summary).toMatch(/server-\d\d:[0-9a-f]{8} \(token \d+\) claims it while the backend shows server-\d\d:[0-9a-f]{8} holding it with token \d+/);
  // Its holders' own figures are on /metrics beside the lease's.
  const metrics = await (await request.get('/metrics')).text();
  expect(metrics).toMatch(/leasehold_lease_holder_renewals_last_5m\{holder="server-\d\d:[0-9a-f]{8}",lease="demo\/pixly\.leases\/weekly-digest-scheduler",source="demo"\} [1-9]/);
  await page.goto('/demo/inbox');
  await expect(page.getByTestId('inbox-message').first()).toContainText('signature verified');
  await screenshot(page, 'demo-inbox');
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

test('in the demo, an operator force-expires the scheduler lease: a new leader with a higher token, and the digest still sends nobody twice', async ({ request }) => {
  test.setTimeout(280_000);
  const auth = { Authorization: `Bearer ${credentials(DEMO_URL).tokens.operator}` };
  const leaseOf = async () => (await (await request.get(`/api/v1/leases/${encodeURIComponent(SCHEDULER)}`)).json()) as { state: string; holder: string | null; token: string | null; stale: boolean };
  await expect.poll(async () => (await leaseOf()).state, { timeout: 60_000 }).toBe('held');
  // The fleet's faults may hand the lease over between the read and the action: that is a 409,
  // nothing done, and reading again is the remedy (as for a person).
  let response;
  for (let attempt = 0; ; attempt++) {
    const before = await leaseOf();
    response = await request.post(`/api/v1/leases/${encodeURIComponent(SCHEDULER)}/force-expire`, {
      headers: auth,
      data: { expectedHolder: before.holder, expectedToken: before.token, reason: 'e2e: the scheduler is wedged, hand it over' },
    });
    if (response.status() !== 409 || attempt === 5) break;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  const body = (await response.json()) as { previousToken: string; newToken: string; auditId: string };
  expect(response.status(), JSON.stringify(body)).toBe(200);
  expect(BigInt(body.newToken)).toBeGreaterThan(BigInt(body.previousToken));
  // A new leader, with a token above the bumped one.
  await expect
    .poll(async () => {
      const lease = await leaseOf();
      return lease.state === 'held' && lease.token !== null && BigInt(lease.token) > BigInt(body.newToken);
    }, { timeout: 60_000, intervals: [500] })
    .toBe(true);
  // The audit log has the action, and the digest delivered nobody twice.
  const audit = (await (await request.get(`/api/v1/audit?lease=${encodeURIComponent(SCHEDULER)}`, { headers: auth })).json()) as { entries: { phase: string; newToken: string | null }[] };
  expect(audit.entries[0]).toMatchObject({ phase: 'done', newToken: body.newToken });
  expect(audit.entries[1]).toMatchObject({ phase: 'requested' });
  // A week of digests finishes under the new leader, and nobody got one twice.
  const digest = async () => ((await (await request.get('/api/v1/demo')).json()) as { digest: { weeksCompleted: number; duplicatesDelivered: number } }).digest;
  const weeks = (await digest()).weeksCompleted;
  await expect.poll(async () => (await digest()).weeksCompleted, { timeout: 170_000, intervals: [1_000] }).toBeGreaterThan(weeks);
  expect((await digest()).duplicatesDelivered).toBe(0);
});
