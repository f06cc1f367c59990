// `npm start` with a bad config stops before building anything, with the problems listed.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
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

it('refuses to start on a port in use, saying so, before building or serving anything', async () => {
  const busy = net.createServer();
  const port = await new Promise<number>((resolve) => busy.listen(0, '127.0.0.1', () => resolve((busy.address() as net.AddressInfo).port)));
  try {
    const file = path.join(scratch, 'empty.config.json');
    writeFileSync(file, '{ "sources": [] }');
    const result = await run('npm', ['start', '--silent'], { env: { LEASEHOLD_CONFIG: file, PORT: String(port), HOST: '127.0.0.1', LEASEHOLD_DEMO: 'off' }, timeoutMs: 60_000 });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`leasehold: cannot start: 127.0.0.1:${port} is already in use by another program`);
    expect(result.stdout).not.toMatch(/serving on|building/);
    expect(result.stderr).not.toMatch(/EADDRINUSE|STACK/);
    expect(result.stderr).not.toMatch(STACK_LINE);
  } finally {
    busy.close();
  }
});
