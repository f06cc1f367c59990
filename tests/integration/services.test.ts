// scripts/services.sh is idempotent: `npm test` already ran `up`; running it again starts
// nothing and keeps every pid it recorded.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { ROOT } from '../support/services';
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
  expect(result.stdout).not.toMatch(/started on/);
  expect(recordedPids()).toEqual(before);

  const status = await run('bash', ['scripts/services.sh', 'status']);
  expect(status.code).toBe(0);
  expect(status.stdout).toMatch(/redis\s+127\.0\.0\.1:16379\s+up/);
  expect(status.stdout).toMatch(/etcd\s+127\.0\.0\.1:12379\s+up/);
});
