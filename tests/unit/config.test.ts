import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../lib/config';
import { DEMO_SOURCE, loadAppConfig } from '../../lib/root';
import { DEMO_SOURCE_ENTRY } from '../../lib/demo/source';
import { configFiles } from '../support/config-files';

const { dir, withFile, configOf: load, problemsOf, remove } = configFiles('config');
afterAll(remove);

const pg = { name: 'pg-main', backend: 'postgres', url: 'postgres://app:hunter2@127.0.0.1:5432/app' };
const redis = { name: 'redis-main', backend: 'redis', urls: ['redis://127.0.0.1:6379'] };
const etcd = { name: 'etcd-main', backend: 'etcd', endpoints: ['http://127.0.0.1:2379'], prefixes: ['election/'] };

describe('valid configurations', () => {
  it('the shipped example file is valid', () => {
    const config = loadAppConfig({
      env: { LEASEHOLD_CONFIG: path.resolve('leasehold.config.example.json'), PG_PASSWORD: 'x' },
      cwd: dir,
    });
    expect(config.sources.map((s) => s.backend)).toEqual(['postgres', 'redis', 'etcd']);
  });

  it('no file at the default path means the embedded store and the demo, whose one source is the demo fleet', () => {
    const config = loadAppConfig({ env: {}, cwd: dir });
    expect(config).toMatchObject({ demo: true, sources: [DEMO_SOURCE], pollMs: 1000, file: null, host: '127.0.0.1', port: 3000, collectorLeaseTtlMs: 10_000 });
    expect(config.store).toEqual({ kind: 'pglite', dataDir: path.join(dir, '.leasehold', 'data') });
  });

  it.each<[string, Record<string, string>, string | null]>([
    ['LEASEHOLD_DEMO=off', { LEASEHOLD_DEMO: 'off' }, null],
    ['a PostgreSQL store', { DATABASE_URL: 'postgres://u:p@db:5432/leasehold' }, null],
    ['sources in the file', {}, JSON.stringify({ sources: [{ name: 'r', backend: 'redis', urls: ['redis://127.0.0.1:6379'] }] })],
  ])('no demo with %s', (_name, env, file) => {
    const config = loadAppConfig({ env: { ...env, ...(file ? { LEASEHOLD_CONFIG: withFile(file) } : {}) }, cwd: dir });
    expect(config.demo).toBe(false);
    expect(config.sources.some((s) => s.name === DEMO_SOURCE.name && s.backend === 'postgres' && s.url === DEMO_SOURCE.url)).toBe(false);
  });

  it("the demo's source is an ordinary entry: written in a file, it validates to the very source the demo registers", () => {
    const fromFile = load({ sources: [DEMO_SOURCE_ENTRY] });
    expect(fromFile.demo).toBe(false);
    expect(fromFile.sources).toEqual([DEMO_SOURCE]);
    expect(loadAppConfig({ env: {}, cwd: dir }).sources).toEqual(fromFile.sources);
    // Beside a user's source, under the same rules (defaults filled, names unique).
    expect(load({ sources: [pg, { name: 'embedded', backend: 'postgres', url: 'pglite://embedded' }] }).sources[1]).toMatchObject({ url: 'pglite://embedded', tables: [], advisoryLocks: false });
    expect(problemsOf({ sources: [pg, { ...DEMO_SOURCE_ENTRY, name: 'pg-main' }] })).toEqual([
      'sources[1] ("pg-main").name: expected a name no other source uses, found "pg-main", already the name of sources[0]',
    ]);
  });

  it("a file's settings apply with the demo's source, as with a user's", () => {
    const config = load({ pollMs: 2000, retention: { eventDays: 7 } });
    expect(config).toMatchObject({ demo: true, sources: [DEMO_SOURCE], pollMs: 2000, retention: { eventDays: 7 } });
  });

  it.each([
    ['another host', 'pglite://elsewhere/demo'],
    ['a password', 'pglite://u:secret@embedded'],
    ['a query', 'pglite://embedded/demo?x=1'],
    ['another scheme', 'sqlite://embedded'],
  ])('the embedded store\'s database is named by pglite://embedded only, not with %s', (_name, url) => {
    expect(problemsOf({ sources: [{ ...pg, url }] })).toHaveLength(1);
    expect(problemsOf({ sources: [{ ...pg, url }] })[0]).toMatch(/^sources\[0\] \("pg-main"\)\.url: expected a postgres:\/\/ or postgresql:\/\/ URL, found /);
  });

  it('a source that names the embedded store needs it: not with DATABASE_URL', () => {
    expect(problemsOf({ sources: [pg, DEMO_SOURCE_ENTRY] }, { DATABASE_URL: 'postgres://u:store-secret@db:5432/leasehold' })).toEqual([
      'sources[1] ("demo").url: expected a postgres:// or postgresql:// URL (pglite://embedded is the embedded store\'s database, and DATABASE_URL puts the store on PostgreSQL), found "pglite://embedded/demo"',
    ]);
  });

  it('fills defaults for every backend', () => {
    const config = load({ sources: [pg, redis, etcd] });
    expect(config.sources[0]).toMatchObject({ tables: [], advisoryLocks: false });
    expect(config.sources[1]).toMatchObject({ match: ['*'], fenceSuffix: ':fence', keyspaceNotifications: 'auto' });
    expect(config.retention).toEqual({ rollupDays: 30, eventDays: 90, renewalSamplesPerLease: 120 });
    expect(config.metrics).toEqual({ leaseSeriesLimit: 1_000 });
    expect(load({ metrics: { leaseSeriesLimit: 0 } }).metrics.leaseSeriesLimit).toBe(0);
  });

  it('DATABASE_URL selects the Postgres store; PORT and HOST are read', () => {
    const config = load({}, { DATABASE_URL: 'postgres://u:p@db:5432/leasehold', PORT: '8080', HOST: '0.0.0.0' });
    expect(config.store).toEqual({ kind: 'postgres', url: 'postgres://u:p@db:5432/leasehold' });
    expect(config).toMatchObject({ port: 8080, host: '0.0.0.0' });
  });

  it('replaces ${NAME} by the environment variable, and $${ stays literal', () => {
    const config = load(
      { sources: [{ ...pg, url: 'postgres://app:${PG_PASSWORD}@127.0.0.1/app' }, { ...redis, match: ['lock:$${x}'] }] },
      { PG_PASSWORD: 's3cret' },
    );
    expect(config.sources[0]).toMatchObject({ url: 'postgres://app:s3cret@127.0.0.1/app' });
    expect(config.sources[1]).toMatchObject({ match: ['lock:${x}'] });
  });
});

// Each case: the input, and the sentences the person must read (every one must appear).
const INVALID: { name: string; content: unknown; env?: Record<string, string>; expected: string[] }[] = [
  {
    name: 'per-lease metrics: a limit out of range, a misspelt field',
    content: { metrics: { leaseSeriesLimit: -1, leaseSeriesLimt: 5 } },
    expected: ['metrics.leaseSeriesLimit', 'metrics.leaseSeriesLimt: unknown field "leaseSeriesLimt" in metrics (did you mean "leaseSeriesLimit"?)'],
  },
  {
    name: 'broken JSON names the line and column',
    content: '{\n  "sources": [\n    { "name": "a" }\n    { "name": "b" }\n  ]\n}',
    expected: ['line 4, column 5: expected valid JSON, found a syntax error'],
  },
  {
    name: 'an unknown backend',
    content: { sources: [{ name: 'mysql-1', backend: 'mysql', url: 'mysql://x' }] },
    expected: ['sources[0] ("mysql-1").backend: expected one of "postgres", "redis", "etcd", "zookeeper", found "mysql"'],
  },
  {
    name: 'a misspelt field gets a suggestion',
    content: { sources: [{ ...redis, fenceSufix: ':f' }], pollMS: 500 },
    expected: [
      'sources[0] ("redis-main").fenceSufix: unknown field "fenceSufix" in sources[0] ("redis-main") (did you mean "fenceSuffix"?)',
      'pollMS: unknown field "pollMS" (did you mean "pollMs"?)',
    ],
  },
  {
    // The fields a suggestion is drawn from are read from the schema, at any depth.
    name: 'misspelt fields in a table entry and in retention get suggestions too',
    content: { sources: [{ ...pg, tables: [{ tabel: 'leases', format: 'leasehold' }] }], retention: { eventDay: 3 } },
    expected: [
      'sources[0] ("pg-main").tables[0].table: expected a table name, found nothing',
      'sources[0] ("pg-main").tables[0].tabel: unknown field "tabel" in sources[0] ("pg-main").tables[0] (did you mean "table"?)',
      'retention.eventDay: unknown field "eventDay" in retention (did you mean "eventDays"?)',
    ],
  },
  {
    name: 'a wrong URL scheme, with the password hidden',
    content: { sources: [{ ...pg, url: 'mysql://app:hunter2@127.0.0.1/app' }] },
    expected: ['sources[0] ("pg-main").url: expected a postgres:// or postgresql:// URL, found "mysql://app:***@127.0.0.1/app"'],
  },
  {
    name: 'a missing required field',
    content: { sources: [{ name: 'etcd-x', backend: 'etcd', prefixes: ['a/'] }] },
    expected: ['sources[0] ("etcd-x").endpoints: is required: expected a list, found nothing'],
  },
  {
    name: 'wrong types',
    content: { pollMs: '1000', sources: [{ ...pg, advisoryLocks: 'yes' }] },
    expected: ['pollMs: expected a number of milliseconds, found "1000"', 'sources[0] ("pg-main").advisoryLocks: expected true or false, found "yes"'],
  },
  {
    name: 'numbers out of range',
    content: { pollMs: 5, retention: { eventDays: 0 } },
    expected: ['pollMs: expected at least 100 ms, found 5', 'retention.eventDays: expected a number at least 1, found 0'],
  },
  {
    name: 'duplicate source names',
    content: { sources: [pg, { ...redis, name: 'pg-main' }] },
    expected: ['sources[1] ("pg-main").name: expected a name no other source uses, found "pg-main", already the name of sources[0]'],
  },
  {
    name: 'an empty list where one entry is needed',
    content: { sources: [{ ...redis, urls: [] }] },
    expected: ['sources[0] ("redis-main").urls: expected at least one redis:// URL, found an empty list'],
  },
  {
    name: 'single mode with several instances',
    content: { sources: [{ ...redis, mode: 'single', urls: ['redis://a:1', 'redis://b:2'] }] },
    expected: ['sources[0] ("redis-main").mode: expected "redlock" for 2 urls ("single" takes exactly one), found "single"'],
  },
  {
    name: 'a source name with spaces',
    content: { sources: [{ ...etcd, name: 'my etcd' }] },
    expected: ['sources[0] ("my etcd").name: expected a source name of 1-63 letters, digits'],
  },
  {
    name: 'a table name that is not an identifier',
    content: { sources: [{ ...pg, tables: [{ table: 'leases; DROP TABLE x', format: 'leasehold' }] }] },
    expected: ['sources[0] ("pg-main").tables[0].table: expected a table name such as "leases" or "app.leases", found "leases; DROP TABLE x"'],
  },
  {
    name: 'a missing environment variable',
    content: { sources: [{ ...pg, url: 'postgres://app:${PG_PASSWORD}@127.0.0.1/app' }] },
    expected: ['sources[0] ("pg-main").url: refers to the environment variable PG_PASSWORD, which is not set'],
  },
  {
    name: 'a password field is never echoed, a number neither',
    content: { sources: [{ ...etcd, password: 12345 }] },
    expected: ['sources[0] ("etcd-main").password: expected text, found a number (not shown)'],
  },
  {
    name: 'bad environment: PORT, DATABASE_URL',
    content: {},
    env: { PORT: '70000', DATABASE_URL: 'mysql://root:topsecret@db/x' },
    expected: [
      'environment variable PORT: expected a port from 1 to 65535, found "70000"',
      'environment variable DATABASE_URL: expected a postgres:// or postgresql:// URL, found "mysql://root:***@db/x"',
    ],
  },
  {
    name: 'bad environment: the collector lease TTL',
    content: {},
    env: { LEASEHOLD_COLLECTOR_LEASE_TTL_MS: 'abc' },
    expected: ['environment variable LEASEHOLD_COLLECTOR_LEASE_TTL_MS: expected a time in milliseconds, found "abc"'],
  },
  {
    name: 'bad environment: a collector lease TTL too short to be safe',
    content: {},
    env: { LEASEHOLD_COLLECTOR_LEASE_TTL_MS: '500' },
    expected: ['environment variable LEASEHOLD_COLLECTOR_LEASE_TTL_MS: expected at least 2000 ms (a shorter ownership lease moves sources on every hiccup), found "500"'],
  },
  {
    name: 'bad environment: the live stream caps',
    content: {},
    env: { LEASEHOLD_STREAM_MAX_CLIENTS: 'lots', LEASEHOLD_STREAM_MAX_CLIENTS_PER_ADDRESS: '0' },
    expected: [
      'environment variable LEASEHOLD_STREAM_MAX_CLIENTS: expected a whole number of streams from 1 to 1000000, found "lots"',
      'environment variable LEASEHOLD_STREAM_MAX_CLIENTS_PER_ADDRESS: expected a whole number of streams from 1 to 1000000, found "0"',
    ],
  },
  {
    name: 'the top level must be an object',
    content: '[1, 2]',
    expected: ['(top level): expected an object, found a list of 2'],
  },
];

describe('invalid configurations: one clear sentence per problem', () => {
  it.each(INVALID)('$name', ({ content, env, expected }) => {
    const problems = problemsOf(content, env);
    for (const sentence of expected) {
      expect(problems.some((p) => p.startsWith(sentence)), `missing "${sentence}" in:\n${problems.join('\n')}`).toBe(true);
    }
    expect(problems).toHaveLength(expected.length);
    for (const problem of problems) {
      expect(problem).not.toMatch(/hunter2|topsecret|\n\s+at /);
    }
  });

  it('reports every problem at once, and the message lists them all', () => {
    const file = withFile({ pollMs: 1, sources: [{ name: 'x', backend: 'nope' }], extra: true });
    let error: unknown;
    try {
      loadAppConfig({ env: { LEASEHOLD_CONFIG: file }, cwd: dir });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const { problems, message } = error as ConfigError;
    expect(problems).toHaveLength(3);
    expect(message).toContain(`${path.basename(file)} has 3 problems:`);
    for (const problem of problems) expect(message).toContain(problem);
  });

  it('a LEASEHOLD_CONFIG that names no file is an error, not a silent default', () => {
    expect(() => loadAppConfig({ env: { LEASEHOLD_CONFIG: 'missing.json' }, cwd: dir })).toThrow(
      /LEASEHOLD_CONFIG: expected the path of a config file, found "missing.json", which does not exist/,
    );
  });
});

// A password must not reach a person through a config problem in any form (issue 13, point 6).
describe('config problems never show a secret', () => {
  it('a numeric password field: "found a number (not shown)", never the number', () => {
    const problems = problemsOf({ sources: [{ ...etcd, username: 'root', password: 12345 }] });
    expect(problems).toEqual(['sources[0] ("etcd-main").password: expected text, found a number (not shown)']);
    expect(problems.join('\n')).not.toContain('12345');
  });

  it.each([
    // V8 quotes ten characters or so either side of an unexpected token: ..."r2@db:1", ], "match"...
    ['in a list, next to a URL with a password', '{"sources": [{"name": "r", "backend": "redis", "urls": ["redis://:hunter2@db:1", ], "match": ["*"]}]}', ']'],
    ['an unquoted password', '{"sources": [{"name": "e", "backend": "etcd", "password": hunter2}]}', 'h'],
    ['a short file that is all password', 'hunter2', 'h'],
  ])('a JSON syntax error %s is placed by line and column, quoting nothing', (_name, text, token) => {
    const problems = problemsOf(text);
    const column = text.indexOf(token, token === ']' ? text.indexOf('hunter2') : 0) + 1;
    expect(problems).toEqual([`line 1, column ${column}: expected valid JSON, found a syntax error (an unexpected character)`]);
  });

  it('a JSON syntax error V8 names in fixed words keeps them, with line and column', () => {
    const text = '{\n  "sources": [{ "url": "postgres://app:hunter2@db/app\n';
    const column = text.length - 1 - text.indexOf('\n'); // the newline that ends line 2, inside the string
    expect(problemsOf(text)).toEqual([`line 2, column ${column}: expected valid JSON, found a syntax error (bad control character in string literal)`]);
  });

  it.each([
    ['a /, a blank, @ and a tab in the password', 'postgres://app:hun/ter2 @x\thunter2@db.internal:5432/app', 'postgres://app:***@db.internal:5432/app'],
    ['a URL without a scheme', 'app:hunter2@db.internal:5432/app', 'app:***@db.internal:5432/app'],
    ['a secret query parameter', 'mysql://db.internal:3306/app?password=hunter2', 'mysql://db.internal:3306/app?password=***'],
  ])('an invalid URL with %s is shown redacted', (_name, url, shown) => {
    const problems = problemsOf({ sources: [{ ...pg, url }] });
    expect(problems).toEqual([`sources[0] ("pg-main").url: expected a postgres:// or postgresql:// URL, found "${shown}"`]);
    expect(problems.join('\n')).not.toMatch(/hun|ter2/);
  });

  it('a secret quoted from another field is scrubbed (every secret of the file, in every form)', () => {
    const problems = problemsOf({
      sources: [{ ...pg, url: 'postgres://app:s3cr%40t@db/app', tables: [{ table: 'leases s3cr@t', format: 'leasehold' }] }],
    });
    expect(problems).toEqual(['sources[0] ("pg-main").tables[0].table: expected a table name such as "leases" or "app.leases", found "leases ***"']);
  });
});
