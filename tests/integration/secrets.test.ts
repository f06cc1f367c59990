// Passwords never reach the CLI's output (issue 13, point 6): `leasehold config check` and
// `leasehold snapshot` run as a person runs them, on configs whose credentials hold every
// character a regex trips on, against the real drivers: a Postgres URL whose password has a
// blank, `@`, `/` and a tab, a Redis URL with `?password=`, an etcd endpoint with `user:pass@`
// that a gRPC error quotes back, and etcd's username/password fields. Only loopback: the
// Postgres URL and the etcd endpoint point at a closed port (127.0.0.1:1).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { STACK_LINE, cli, type RunResult } from '../support/run';
import { testServices } from '../support/services';

const services = testServices();
const scratch = mkdtempSync(path.join(os.tmpdir(), 'leasehold-secrets-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// WHATWG (and so pg) reads the URL below as host 127.0.0.1:1 with the password "pa ss" and
// the path "/rd<TAB>x@..."; Leasehold reads it as the person meant: the whole password, to
// the last @ before the host. Neither reading may show.
const PG_PASSWORD = 'pa ss@127.0.0.1:1/rd\tx';
const REDIS_PASSWORD = 'r3d1s@pw';
const ENDPOINT_PASSWORD = 'e7cd pw';
const ETCD_USERNAME = 'etcd-admin';
const ETCD_PASSWORD = 'etcd-p4ss w0rd';
const SECRETS = [PG_PASSWORD, 'pa ss', 'rd\tx', REDIS_PASSWORD, ENDPOINT_PASSWORD, ETCD_USERNAME, ETCD_PASSWORD];

/** Every form a secret may be printed in: raw, percent-encoded (either hex case), percent-decoded, JSON-escaped, without tabs. */
function formsOf(secret: string): string[] {
  const forms = new Set<string>();
  for (const base of [secret, secret.replace(/\t/g, '')]) {
    const encoded = encodeURIComponent(base);
    for (const form of [base, encoded, encoded.toLowerCase(), encoded.replace(/%20/g, '+'), JSON.stringify(base).slice(1, -1)]) forms.add(form);
  }
  return [...forms];
}

function expectNoSecret(result: RunResult, secrets: string[] = SECRETS) {
  const output = `${result.stdout}\n${result.stderr}`;
  for (const secret of secrets) {
    for (const form of formsOf(secret)) expect(output, `"${form}" (a form of ${JSON.stringify(secret)}) in:\n${output}`).not.toContain(form);
  }
  expect(output).not.toMatch(STACK_LINE);
}

function writeConfig(name: string, config: unknown): string {
  const file = path.join(scratch, name);
  writeFileSync(file, JSON.stringify(config, null, 2));
  return file;
}

const redisPort = new URL(services.redisUrl).port || '6379';
const reachable = {
  sources: [
    { name: 'pg', backend: 'postgres', url: `postgres://leasehold:${PG_PASSWORD}@127.0.0.1:5432/leasehold`, tables: [{ table: 'leases', format: 'leasehold' }] },
    { name: 'cache', backend: 'redis', urls: [`redis://127.0.0.1:${redisPort}/0?password=${REDIS_PASSWORD}`], match: ['lh-secrets-test:*'] },
    {
      name: 'etcd',
      backend: 'etcd',
      endpoints: [`http://etcd-user:${ENDPOINT_PASSWORD}@127.0.0.1:1`],
      prefixes: ['lh-secrets-test/'],
      username: ETCD_USERNAME,
      password: ETCD_PASSWORD,
    },
  ],
};

describe('secrets in the CLI', () => {
  it('config check on a config full of credentials says it is valid, naming no secret', async () => {
    const file = writeConfig('reachable.json', reachable);
    const result = await cli(['config', 'check', '--config', file], { DATABASE_URL: undefined });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/valid; 3 sources: pg \(postgres\), cache \(redis\), etcd \(etcd\)/);
    expectNoSecret(result);
  });

  it('snapshot: the sources that cannot be read say why, and no error quotes a credential', async () => {
    const file = writeConfig('reachable.json', reachable);
    const json = await cli(['snapshot', '--config', file, '--json'], { DATABASE_URL: undefined });
    expectNoSecret(json);
    expect(json.code, json.stderr).toBe(1);
    const printed = JSON.parse(json.stdout) as { sources: { name: string; status: string; error: string | null }[] };
    const byName = new Map(printed.sources.map((s) => [s.name, s]));
    expect(byName.get('pg')).toMatchObject({ status: 'down', error: expect.stringMatching(/\S/) });
    expect(byName.get('etcd')).toMatchObject({ status: 'down', error: expect.stringMatching(/\S/) });
    expect(byName.has('cache')).toBe(true);

    const table = await cli(['snapshot', '--config', file], { DATABASE_URL: undefined, LEASEHOLD_DEBUG: '1' });
    expectNoSecret(table);
    expect(table.stdout).toMatch(/^pg\s+postgres\s+down/m);
    expect(table.stdout).toMatch(/^etcd\s+etcd\s+down/m);
  }, 60_000);

  it('config check and snapshot on a URL no parser accepts (an unencoded / first) show it redacted', async () => {
    const password = 'hun/ter2 @x\ty';
    const file = writeConfig('broken.json', {
      sources: [
        { name: 'pg', backend: 'postgres', url: `postgres://leasehold:${password}@127.0.0.1:5432/leasehold` },
        { name: 'no-scheme', backend: 'postgres', url: `leasehold:${password}@127.0.0.1:5432/leasehold` },
        { name: 'etcd', backend: 'etcd', endpoints: ['http://127.0.0.1:1'], prefixes: ['a/'], username: ETCD_USERNAME, password: 12345 },
      ],
    });
    for (const args of [['config', 'check'], ['snapshot']]) {
      const result = await cli([...args, '--config', file], { DATABASE_URL: undefined });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('sources[0] ("pg").url: expected a postgres:// or postgresql:// URL, found "postgres://leasehold:***@127.0.0.1:5432/leasehold"');
      expect(result.stderr).toContain('sources[1] ("no-scheme").url: expected a postgres:// or postgresql:// URL, found "leasehold:***@127.0.0.1:5432/leasehold"');
      expect(result.stderr).toContain('sources[2] ("etcd").password: expected text, found a number (not shown)');
      expectNoSecret(result, [password, 'ter2', '12345']);
    }
  });

  it('config check on broken JSON next to a password places the error, quoting nothing', async () => {
    const file = path.join(scratch, 'syntax.json');
    // V8 quotes about ten characters either side of the token: ..."=hunter2", ], "match"...
    writeFileSync(file, `{"sources": [{"name": "c", "backend": "redis", "urls": ["redis://127.0.0.1:1/0?password=hunter2", ], "match": ["*"]}]}`);
    const result = await cli(['config', 'check', '--config', file], { DATABASE_URL: undefined });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/line 1, column \d+: expected valid JSON, found a syntax error \(an unexpected character\)/);
    expect(result.stderr).not.toMatch(/nter2/);
  });
});
