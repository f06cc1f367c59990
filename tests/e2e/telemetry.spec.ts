// POST /api/v1/telemetry on the postgres server: a holder using lib/lease's reporter posts its
// renewals and its claim, and the lease's renewals answer shows them beside what the backend
// showed; hostile bodies each get a 4xx that names the problem, with nothing of that request
// stored; the reporter token reads nothing, and no other role may post.
import { expect, test, type Page } from '@playwright/test';
import { POSTGRES_URL } from '../../playwright.config';
import { createLeaseClient, createLeaseReporter, type LeaseClient } from '../../lib/lease';
import { testServices } from '../support/services';
import { credentials } from './credentials';
import { OBSERVED } from './observed';
import { screenshot, signIn, watchConsole } from './support';

test.use({ baseURL: POSTGRES_URL });

type HoldersAnswer = { holders: { holder: string; claims: boolean; token: string | null; claimsSince: string | null; minutes: { count: number; failed: number; rttMaxMs: number; lateMaxMs: number | null }[] }[] };

const leaseIdOf = (key: string) => `${OBSERVED.pgSource}/${OBSERVED.pgTable}/${key}`;

async function post(body: string | object, token: string, contentType = 'application/json') {
  const response = await fetch(`${POSTGRES_URL}/api/v1/telemetry`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': contentType },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, text, json: (() => { try { return JSON.parse(text) as { error?: string; message?: string }; } catch { return {}; } })() };
}

async function holdersOf(leaseId: string): Promise<HoldersAnswer['holders']> {
  const response = await fetch(`${POSTGRES_URL}/api/v1/leases/${encodeURIComponent(leaseId)}/renewals`, { headers: { Authorization: `Bearer ${credentials(POSTGRES_URL).tokens.viewer}` } });
  expect(response.status).toBe(200);
  return ((await response.json()) as HoldersAnswer).holders;
}

/** A lease held with lib/lease in the table the server watches, once the server has seen it. */
async function observedLease(client: LeaseClient, name: string) {
  const lease = (await client.acquire(name, { holder: 'reporting-worker', ttlMs: 120_000 }))!;
  expect(lease).not.toBeNull();
  const viewer = credentials(POSTGRES_URL).tokens.viewer;
  await expect
    .poll(async () => (await fetch(`${POSTGRES_URL}/api/v1/leases/${encodeURIComponent(leaseIdOf(name))}`, { headers: { Authorization: `Bearer ${viewer}` } })).status, { timeout: 15_000 })
    .toBe(200);
  return lease;
}

/** The lease page's holder chart and claims, as a viewer sees them. */
async function holderPanel(page: Page, leaseId: string, claim: RegExp) {
  await page.goto(`/leases/${encodeURIComponent(leaseId)}`);
  const chart = page.getByTestId('holder-chart');
  await expect(chart).toBeVisible({ timeout: 15_000 });
  await expect(page.getByTestId('holder-claims')).toContainText(claim);
  return chart;
}

test('a holder reports its renewals and its claim through lib/lease, and the lease shows them beside the backend\'s view', async ({ page }) => {
  const creds = credentials(POSTGRES_URL);
  const errors: string[] = [];
  const name = `reported-${Date.now().toString(36)}`;
  // Posts when this test flushes, not at once when the claim starts (tests/contract/lease-timings.test.ts shows that).
  const reporter = createLeaseReporter({ url: POSTGRES_URL, token: creds.tokens.reporter, leaseId: leaseIdOf, flushEveryMs: 60_000, claimChangesAtOnce: false, onError: (e) => errors.push(e.message) });
  const client = createLeaseClient({ backend: 'postgres', url: testServices().databaseUrl, table: OBSERVED.pgTable, onTiming: reporter.listener });
  try {
    let lease = await observedLease(client, name);
    for (let i = 0; i < 5; i++) lease = await client.renew(lease, { dueAt: performance.now() - (i === 4 ? 250 : 0) });
    await reporter.flush();
    expect(errors).toEqual([]);
    expect(reporter.stats()).toMatchObject({ sent: 5, dropped: 0, pending: 0, failedPosts: 0 });

    const [holder] = await holdersOf(leaseIdOf(name));
    expect(holder).toMatchObject({ holder: lease.holder, claims: true, token: lease.token.toString() });
    expect(holder!.claimsSince).not.toBeNull();
    expect(holder!.minutes.reduce((sum, m) => sum + m.count, 0)).toBe(5);
    expect(holder!.minutes.reduce((sum, m) => sum + m.failed, 0)).toBe(0);
    expect(Math.max(...holder!.minutes.map((m) => m.lateMaxMs ?? 0))).toBeGreaterThanOrEqual(250);

    // The lease page shows it to a viewer, on a desktop and on a phone, with no console error.
    const consoleErrors = watchConsole(page);
    await signIn(page, 'viewer', POSTGRES_URL);
    const chart = await holderPanel(page, leaseIdOf(name), new RegExp(`claims it ${lease.holder.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} · token ${lease.token}`));
    await expect(chart).toHaveAttribute('data-points', /^[1-9]/);
    await expect(chart.locator('figcaption')).toContainText(/5 reported renewals; slowest round trip \d+ ms; latest \d+ ms behind schedule; 1 of 1 holder claim it\./);
    // The renewal chart draws the holder's own figures beside the backend's.
    await expect(page.getByTestId('renewal-chart').locator('figcaption')).toContainText(/As its holders see it: slowest round trip \d+(\.\d)? (ms|s), largest lateness \d+(\.\d)? (ms|s)/);
    await screenshot(page, 'telemetry-lease-desktop');
    await page.setViewportSize({ width: 390, height: 844 });
    await holderPanel(page, leaseIdOf(name), /claims it/);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await screenshot(page, 'telemetry-lease-phone');
    expect(consoleErrors).toEqual([]);

    // The holder lets go: its claim ends, and the lease says so.
    await client.release(lease);
    await reporter.flush();
    const [after] = await holdersOf(leaseIdOf(name));
    expect(after).toMatchObject({ holder: lease.holder, claims: false, claimsSince: null });
  } finally {
    await reporter.close();
    await client.close();
  }
});

test('hostile telemetry bodies: each a 4xx naming the problem, and nothing of that request stored', async () => {
  const creds = credentials(POSTGRES_URL);
  const name = `hostile-${Date.now().toString(36)}`;
  const client = createLeaseClient({ backend: 'postgres', url: testServices().databaseUrl, table: OBSERVED.pgTable });
  try {
    const lease = await observedLease(client, name);
    const known = leaseIdOf(name);
    const at = new Date().toISOString();
    const report = (over: object = {}) => ({ lease: known, holder: lease.holder, token: lease.token.toString(), claims: true, renewals: [{ at, rttMs: 2, lateMs: 0, ok: true }], ...over });
    const reporter = creds.tokens.reporter;

    const cases: { name: string; body: string | object; contentType?: string; status: number; error: string; says: RegExp }[] = [
      { name: 'an unknown lease beside a known one', body: { reports: [report(), report({ lease: 'pg-e2e/no/such-lease' })] }, status: 422, error: 'unknown_lease', says: /reports\[1\]\.lease: no lease "pg-e2e\/no\/such-lease" is observed/ },
      { name: 'a source that does not exist', body: { reports: [report({ lease: 'nowhere/x' })] }, status: 422, error: 'unknown_lease', says: /reports\[0\]\.lease: no lease "nowhere\/x"/ },
      { name: '1,001 renewals', body: { reports: [report({ renewals: Array.from({ length: 1_001 }, () => ({ at, rttMs: 1, lateMs: null, ok: true })) })] }, status: 400, error: 'invalid_body', says: /1000/ },
      { name: 'a body over 1 MB', body: { reports: [report({ holder: 'h'.repeat(1_000), renewals: [] })], padding: 'x'.repeat(1_100_000) }, status: 413, error: 'body_too_large', says: /1000000|1 MB|bytes/ },
      { name: 'malformed JSON', body: '{"reports": [', status: 400, error: 'invalid_body', says: /JSON/ },
      { name: 'not JSON at all', body: 'reports=1', contentType: 'text/plain', status: 415, error: 'unsupported_media_type', says: /application\/json/ },
      { name: 'a token that is not a number', body: { reports: [report({ token: '12abc' })] }, status: 400, error: 'invalid_body', says: /"reports\.0\.token"/ },
      { name: 'a token beyond 2^256', body: { reports: [report({ token: '9'.repeat(79) })] }, status: 400, error: 'invalid_body', says: /"reports\.0\.token"/ },
      { name: 'a negative round trip', body: { reports: [report({ renewals: [{ at, rttMs: -1, lateMs: 0, ok: true }] })] }, status: 400, error: 'invalid_body', says: /"reports\.0\.renewals\.0\.rttMs"/ },
      { name: 'a round trip of 40 days', body: { reports: [report({ renewals: [{ at, rttMs: 40 * 86_400_000, lateMs: 0, ok: true }] })] }, status: 400, error: 'invalid_body', says: /at most a day/ },
      { name: 'a field nobody knows', body: { reports: [report({ extra: 1 })] }, status: 400, error: 'invalid_body', says: /extra/ },
      { name: 'a time that is not a time', body: { reports: [report({ renewals: [{ at: 'yesterday', rttMs: 1, lateMs: 0, ok: true }] })] }, status: 400, error: 'invalid_body', says: /ISO 8601/ },
      { name: 'a renewal two days old', body: { reports: [report({ renewals: [{ at: new Date(Date.now() - 2 * 86_400_000).toISOString(), rttMs: 1, lateMs: 0, ok: true }] })] }, status: 422, error: 'invalid_time', says: /more than a day old/ },
      { name: 'a renewal an hour ahead', body: { reports: [report({ renewals: [{ at: new Date(Date.now() + 3_600_000).toISOString(), rttMs: 1, lateMs: 0, ok: true }] })] }, status: 422, error: 'invalid_time', says: /ahead of this server's clock/ },
      { name: 'a NUL in a holder', body: { reports: [report({ holder: 'a\u0000b' })] }, status: 400, error: 'invalid_body', says: /U\+0000|NUL/ },
      { name: 'a lone surrogate in a holder', body: { reports: [report({ holder: 'a\ud800b' })] }, status: 400, error: 'invalid_body', says: /"reports\.0\.holder".*lone UTF-16 surrogate/ },
      { name: 'a lone surrogate in a lease', body: { reports: [report({ lease: `${known}\udc00` })] }, status: 400, error: 'invalid_body', says: /"reports\.0\.lease".*lone UTF-16 surrogate/ },
      { name: 'a claim for -1 ms', body: { reports: [report({ claimForMs: -1 })] }, status: 400, error: 'invalid_body', says: /"reports\.0\.claimForMs".*0 ms or more/ },
      { name: 'a claim for 40 days', body: { reports: [report({ claimForMs: 40 * 86_400_000 })] }, status: 400, error: 'invalid_body', says: /"reports\.0\.claimForMs".*at most a day/ },
      { name: 'a claim for "5 s"', body: { reports: [report({ claimForMs: '5 s' })] }, status: 400, error: 'invalid_body', says: /"reports\.0\.claimForMs"/ },
      { name: 'a TTL beyond 2^63', body: { reports: [report({ ttlMs: 2 ** 64 })] }, status: 400, error: 'invalid_body', says: /"reports\.0\.ttlMs".*30 days/ },
      { name: 'a TTL of 1.5 ms', body: { reports: [report({ ttlMs: 1.5 })] }, status: 400, error: 'invalid_body', says: /"reports\.0\.ttlMs".*whole milliseconds/ },
      { name: 'no reports', body: { reports: [] }, status: 400, error: 'invalid_body', says: /at least one report/ },
      { name: 'an array instead of an object', body: [1, 2], status: 400, error: 'invalid_body', says: /reports/ },
    ];
    const wrong: string[] = [];
    for (const c of cases) {
      const answer = await post(c.body, reporter, c.contentType);
      if (answer.status !== c.status || answer.json.error !== c.error || !c.says.test(answer.json.message ?? '') || /at .*\.ts:\d+|node_modules/.test(answer.text)) {
        wrong.push(`${c.name}: ${answer.status} ${answer.text.slice(0, 300)}`);
      }
    }
    expect(wrong).toEqual([]);
    // Not one of them stored anything, not even the good report beside the unknown lease.
    expect(await holdersOf(known)).toEqual([]);

    // The same report alone is taken.
    const ok = await post({ reports: [report()] }, reporter);
    expect(ok).toMatchObject({ status: 202, json: { accepted: { reports: 1, renewals: 1 } } });
    expect((await holdersOf(known))[0]!.minutes[0]!.count).toBe(1);
    await client.release(lease);
  } finally {
    await client.close();
  }
});

test('a reporter token reads nothing, and no other role may post telemetry', async () => {
  const creds = credentials(POSTGRES_URL);
  const reporter = creds.tokens.reporter;
  for (const path of ['/api/v1/leases', '/api/v1/sources', '/metrics', '/api/v1/audit']) {
    const response = await fetch(`${POSTGRES_URL}${path}`, { headers: { Authorization: `Bearer ${reporter}` } });
    expect(response.status, path).toBe(403);
    expect(await response.text()).toContain('may not');
  }
  for (const role of ['viewer', 'operator', 'admin'] as const) {
    const answer = await post({ reports: [{ lease: 'x/y', holder: 'h', token: null, claims: false, renewals: [] }] }, creds.tokens[role]);
    expect(answer.status, role).toBe(403);
    expect(answer.json.message).toMatch(/may not report holder-side renewal timings: that needs the role reporter/);
  }
});
