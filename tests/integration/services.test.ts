// scripts/services.sh is idempotent: `npm test` already ran `up`; running it again starts
// nothing and keeps every pid it recorded. Alertmanager, the one service the tests reach
// only over HTTP, is checked here too: ready, and keeping an alert it is sent.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { ROOT, testServices } from '../support/services';
import { run } from '../support/run';

const pidsDir = path.join(ROOT, '.leasehold', 'services', 'pids');
const recordedPids = () =>
  Object.fromEntries(
    readdirSync(pidsDir)
      .filter((f) => f.endsWith('.pid'))
      .map((f) => [f, readFileSync(path.join(pidsDir, f), 'utf8').trim()]),
  );

it('a second `up` reuses everything and starts nothing', async () => {
  const before = recordedPids();
  const result = await run('bash', ['scripts/services.sh', 'up', '--no-chromium'], { timeoutMs: 120_000 });
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout).toMatch(/postgres: reusing/);
  expect(result.stdout).toMatch(/redis: reusing/);
  expect(result.stdout).toMatch(/etcd: reusing/);
  expect(result.stdout).toMatch(/alertmanager: reusing/);
  expect(result.stdout).not.toMatch(/started on/);
  expect(recordedPids()).toEqual(before);

  const status = await run('bash', ['scripts/services.sh', 'status']);
  expect(status.code).toBe(0);
  expect(status.stdout).toMatch(/redis\s+127\.0\.0\.1:16379\s+up/);
  expect(status.stdout).toMatch(/etcd\s+127\.0\.0\.1:12379\s+up/);
  expect(status.stdout).toMatch(/alertmanager\s+127\.0\.0\.1:19093\s+up/);
});

it('Alertmanager is ready and lists an alert it was sent', async () => {
  const url = testServices().alertmanagerUrl;
  expect(url, 'LEASEHOLD_TEST_ALERTMANAGER_URL').toBeDefined();
  expect((await fetch(`${url}/-/ready`)).status).toBe(200);

  // A label of its own, so alerts left by earlier runs (kept until they end) do not count.
  const marker = `${process.pid}-${Date.now()}`;
  const posted = await fetch(`${url}/api/v2/alerts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify([
      { labels: { alertname: 'LeaseholdServicesTest', marker }, endsAt: new Date(Date.now() + 60_000).toISOString() },
    ]),
  });
  expect(posted.status).toBe(200);

  const listed = await fetch(`${url}/api/v2/alerts?filter=${encodeURIComponent(`marker="${marker}"`)}`);
  expect(listed.status).toBe(200);
  const alerts = (await listed.json()) as { labels: Record<string, string>; status: { state: string } }[];
  expect(alerts.map((a) => [a.labels.alertname, a.status.state])).toEqual([['LeaseholdServicesTest', 'active']]);
});
