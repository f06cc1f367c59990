// `npm start` with a bad config stops before building anything, with the problems listed.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { STACK_LINE, run } from '../support/run';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'leasehold-start-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

it('refuses to start on an invalid config, naming each problem', async () => {
  const file = path.join(scratch, 'leasehold.config.json');
  writeFileSync(file, '{ "sources": [ { "name": "pg", "backend": "postgres", "url": "postgres://a:hunter2@h/db", "tabels": [] } ] }');
  const result = await run('npm', ['start', '--silent'], { env: { LEASEHOLD_CONFIG: file, PORT: 'eighty' }, timeoutMs: 60_000 });
  expect(result.code).not.toBe(0);
  expect(result.stderr).toContain('leasehold: cannot start:');
  expect(result.stderr).toContain('environment variable PORT: expected a port number, found "eighty"');
  expect(result.stderr).toContain('sources[0] ("pg").tabels: unknown field "tabels" in sources[0] ("pg") (did you mean "tables"?)');
  expect(result.stdout).not.toMatch(/building/);
  expect(result.stderr + result.stdout).not.toContain('hunter2');
  expect(result.stderr).not.toMatch(STACK_LINE);
});
