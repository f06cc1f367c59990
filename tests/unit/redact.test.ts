// Secrets are redacted by parsing (lib/redact.ts), wherever a connection string or a message
// may carry one: every hostile form a prober tried, and the host and port still readable.
import { describe, expect, it } from 'vitest';
import { redactUrlPassword, type SourceConfig } from '../../lib/config';
import { sourceTarget } from '../../lib/queries/console';
import { redactUrl, redactUrlsIn, scrub, secretForms, secretsOf } from '../../lib/redact';

/** Every form a secret may be printed in: as written, percent-encoded, percent-decoded, without tabs (WHATWG drops them). */
function formsOf(secret: string): string[] {
  const forms = new Set([secret, encodeURIComponent(secret), secret.replace(/\t/g, '')]);
  try {
    forms.add(decodeURIComponent(secret));
  } catch {
    // not percent-encoded
  }
  return [...forms].filter((form) => form.length > 0);
}

function expectHidden(output: string, secrets: string[]) {
  for (const secret of secrets) {
    for (const form of formsOf(secret)) expect(output, `"${form}" (a form of "${secret}") in ${JSON.stringify(output)}`).not.toContain(form);
  }
}

type UrlCase = {
  name: string;
  url: string;
  /** Must not appear in any form. */
  secrets: string[];
  /** Must still appear: host, port, user, path, harmless parameters. */
  visible: string[];
  /** The exact output, where the secret is also part of what must stay visible. */
  exact?: string;
};

const URLS: UrlCase[] = [
  { name: 'a password with a space', url: 'postgres://app:pa ss@db.internal:5432/app', secrets: ['pa ss'], visible: ['postgres://app:***@db.internal:5432/app'] },
  { name: 'a password with a tab', url: 'postgres://app:pa\tss@db.internal:5432/app', secrets: ['pa\tss'], visible: ['postgres://app:***@db.internal:5432/app'] },
  { name: 'a password with an @ (the tail after the first @)', url: 'postgres://app:hun@ter2@db.internal:5432/app', secrets: ['hun@ter2', 'ter2'], visible: ['postgres://app:***@db.internal:5432/app'] },
  { name: 'a password with an unencoded /', url: 'postgres://app:hun/ter2@db.internal:5432/app', secrets: ['hun/ter2', 'ter2'], visible: ['postgres://app:***@db.internal:5432/app'] },
  { name: 'a password with space, @, / and tab', url: 'postgres://app:s3 cr@t/x\ty@db.internal:5432/app', secrets: ['s3 cr@t/x\ty', 't/x'], visible: ['postgres://app:***@db.internal:5432/app'] },
  { name: 'a password that reads as a port to WHATWG', url: 'postgres://app:5/x9@db.internal:5432/app', secrets: ['5/x9', 'x9'], visible: ['postgres://app:***@db.internal:5432/app'] },
  { name: 'a password with : # and ?', url: 'postgres://app:a:b#c?d@db.internal:5432/app', secrets: ['a:b#c?d', 'b#c'], visible: ['postgres://app:***@db.internal:5432/app'] },
  { name: 'a password in ?password=', url: 'redis://cache.internal:6379/0?password=hunter2', secrets: ['hunter2'], visible: ['redis://cache.internal:6379/0?password=***'] },
  { name: 'a ?password= with an @', url: 'redis://cache.internal:6379/0?password=hunt@er2', secrets: ['hunt@er2', 'er2'], visible: ['redis://cache.internal:6379/0?password=***'] },
  { name: 'a ?password= with an unencoded &', url: 'rediss://cache.internal:6380?sslpassword=a&b9&db=0', secrets: ['a&b9', 'b9'], visible: ['rediss://cache.internal:6380?sslpassword=***&db=0'] },
  {
    name: 'sslpassword, sslkey and token parameters',
    url: 'postgres://app@db.internal:5432/app?sslmode=require&sslpassword=k3yp4ss&sslkey=/etc/k3y.pem&token=t0k3n',
    secrets: ['k3yp4ss', '/etc/k3y.pem', 't0k3n'],
    visible: ['postgres://app@db.internal:5432/app?sslmode=require&sslpassword=***&sslkey=***&token=***'],
  },
  { name: 'a URL without a scheme', url: 'app:hunter2@db.internal:5432/app', secrets: ['hunter2'], visible: ['app:***@db.internal:5432/app'] },
  { name: 'a URL without a scheme, with @ and / in the password', url: 'app:hu@n/ter2@db.internal:5432/app', secrets: ['hu@n/ter2', 'ter2'], visible: ['app:***@db.internal:5432/app'] },
  { name: 'etcd endpoint credentials', url: 'http://root:hunter2@127.0.0.1:2379', secrets: ['hunter2'], visible: ['http://root:***@127.0.0.1:2379'] },
  { name: 'an IPv6 host', url: 'postgres://app:hunter2@[::1]:5432/app', secrets: ['hunter2'], visible: ['postgres://app:***@[::1]:5432/app'] },
  { name: 'an IPv6 host with a zone, and @ / in the password', url: 'postgres://app:p@ss/w@[fe80::1%25eth0]:5432/app', secrets: ['p@ss/w', 'ss/w'], visible: ['@[fe80::1%25eth0]:5432/app'] },
  { name: 'a percent-encoded password', url: 'postgres://app:p%40ss%2Fw%20rd@db.internal:5432/app', secrets: ['p%40ss%2Fw%20rd', 'p@ss/w rd'], visible: ['postgres://app:***@db.internal:5432/app'] },
  { name: 'several hosts', url: 'postgres://app:hunter2@db1.internal:5432,db2.internal:5433/app', secrets: ['hunter2'], visible: ['db1.internal:5432,db2.internal:5433/app'] },
  { name: 'a unicode password', url: 'postgres://app:пароль🔑@db.internal:5432/app', secrets: ['пароль🔑'], visible: ['postgres://app:***@db.internal:5432/app'] },
  { name: 'a unicode host', url: 'postgres://app:pässwörd@hôst.example:5432/app', secrets: ['pässwörd'], visible: ['postgres://app:***@hôst.example:5432/app'] },
  { name: 'a socket directory instead of a host', url: 'postgres://app:hunter2@/app?host=/var/run/postgresql', secrets: ['hunter2'], visible: ['postgres://app:***@/app?host=/var/run/postgresql'] },
  { name: 'a Redis password with no user', url: 'redis://:hunter2@cache.internal:6379/2', secrets: ['hunter2'], visible: ['redis://:***@cache.internal:6379/2'] },
  { name: "an @ in a harmless parameter is not taken for the password's", url: 'postgres://app:hunter2@db.internal:5432/app?application_name=me@x', secrets: ['hunter2'], visible: ['postgres://app:***@db.internal:5432/app?application_name=me@x'] },
  // The password also being part of the host: its place in the URL hides it, the host stays.
  { name: 'a password equal to the host', url: 'postgres://app:db.internal@db.internal:5432/app', secrets: [], visible: [], exact: 'postgres://app:***@db.internal:5432/app' },
  { name: 'a password that is part of the host', url: 'postgres://app:127.0@127.0.0.1:5432/app', secrets: [], visible: [], exact: 'postgres://app:***@127.0.0.1:5432/app' },
  { name: 'a password equal to the port', url: 'redis://:6379@cache:6379', secrets: [], visible: [], exact: 'redis://:***@cache:6379' },
  { name: 'an empty password', url: 'postgres://app:@db.internal:5432/app', secrets: [], visible: [], exact: 'postgres://app:***@db.internal:5432/app' },
  { name: 'no password: nothing changes', url: 'postgres://app@db.internal:5432/app?sslmode=require', secrets: [], visible: [], exact: 'postgres://app@db.internal:5432/app?sslmode=require' },
  { name: 'not a URL: nothing changes', url: 'lock:*', secrets: [], visible: [], exact: 'lock:*' },
];

describe('redactUrl: one connection string', () => {
  it.each(URLS)('$name', ({ url, secrets, visible, exact }) => {
    const output = redactUrl(url);
    expectHidden(output, secrets);
    for (const part of visible) expect(output).toContain(part);
    if (exact !== undefined) expect(output).toBe(exact);
  });

  // Every call site that imported the regex (sources, errors, the console's target) goes through this.
  it.each(URLS)('redactUrlPassword (lib/config/issues.ts): $name', ({ url, secrets, visible, exact }) => {
    const output = redactUrlPassword(url);
    expectHidden(output, secrets);
    for (const part of visible) expect(output).toContain(part);
    if (exact !== undefined) expect(output).toBe(exact);
  });
});

const TEXTS: { name: string; text: string; secrets: string[]; visible: string[] }[] = [
  {
    name: "a gRPC error quoting an etcd endpoint's credentials",
    text: '14 UNAVAILABLE: Name resolution failed for target dns:root:hunter2@127.0.0.1:2379',
    secrets: ['hunter2'],
    visible: ['14 UNAVAILABLE: Name resolution failed for target dns:root:***@127.0.0.1:2379'],
  },
  {
    name: 'a URL with a blank, @ and / in its password inside a sentence',
    text: 'could not connect to postgres://app:s3 cr@t/x@db.internal:5432/app: timeout',
    secrets: ['s3 cr@t/x', 't/x'],
    visible: ['postgres://app:***@db.internal:5432/app: timeout'],
  },
  {
    name: 'two URLs in one line, one with ?password=',
    text: 'tried postgres://app:hunter2@db:5432/app and redis://cache:6379/0?password=s3cret then gave up',
    secrets: ['hunter2', 's3cret'],
    visible: ['postgres://app:***@db:5432/app and redis://cache:6379/0?password=*** then gave up'],
  },
  { name: 'key=value connection text', text: 'host=db.internal port=5432 password=hunter2 user=app', secrets: ['hunter2'], visible: ['host=db.internal port=5432', 'user=app'] },
  { name: 'no URL: nothing changes', text: 'Redis at 10.0.0.5:6379 refused the connection (see ops@example.com)', secrets: [], visible: ['Redis at 10.0.0.5:6379 refused the connection (see ops@example.com)'] },
];

describe('redactUrlsIn: URLs inside free text', () => {
  it.each(TEXTS)('$name', ({ text, secrets, visible }) => {
    const output = redactUrlsIn(text);
    expectHidden(output, secrets);
    for (const part of visible) expect(output).toContain(part);
    // And the same through the function every older call site uses.
    const delegated = redactUrlPassword(text);
    expectHidden(delegated, secrets);
    for (const part of visible) expect(delegated).toContain(part);
  });
});

describe('secretsOf and scrub: text that quotes a secret without being a URL', () => {
  const config = {
    sources: [
      { name: 'pg', backend: 'postgres', url: 'postgres://app:s3 cr@t/x\ty@db.internal:5432/app', tables: [], advisoryLocks: false },
      { name: 'cache', backend: 'redis', urls: ['redis://cache.internal:6379/0?password=r3d1s%26pw'] },
      { name: 'etcd', backend: 'etcd', endpoints: ['http://ep-user:ep-p4ss@127.0.0.1:2379'], prefixes: ['a/'], username: 'etcd-admin', password: 'etcd-p4ss' },
      { name: 'odd', backend: 'etcd', endpoints: ['http://127.0.0.1:2379'], prefixes: ['a/'], password: 12345 },
    ],
    store: { kind: 'postgres', url: 'postgres://store:st0re pw@127.0.0.1:5432/leasehold' },
  };
  const secrets = secretsOf(config);

  it.each([
    ['a driver error quoting the raw password', 'password "s3 cr@t/x\ty" rejected', ['s3 cr@t/x\ty']],
    ['the password percent-encoded, either hex case', 'url: postgres://app:s3%20cr%40t%2Fx%09y@db / s3%20cr%40t%2fx%09y', ['s3 cr@t/x\ty']],
    ['the password as WHATWG reads it (tab dropped, userinfo encoding)', 'parsed password: s3%20cr%40t%2Fxy', ['s3%20cr%40t%2Fxy']],
    ['a JSON-escaped password', '{"password":"s3 cr@t/x\\ty"}', ['s3 cr@t/x\ty', 's3 cr@t/x\\ty']],
    ['a query-parameter secret, decoded and raw', 'AUTH r3d1s&pw failed; AUTH r3d1s%26pw failed', ['r3d1s&pw', 'r3d1s%26pw']],
    ["etcd's username and password fields", 'etcdserver: authentication failed for etcd-admin / etcd-p4ss', ['etcd-admin', 'etcd-p4ss']],
    ['etcd endpoint credentials', '14 UNAVAILABLE: Name resolution failed for target dns:ep-user:ep-p4ss@127.0.0.1:2379', ['ep-p4ss']],
    ['a numeric password field', 'found 12345 where text was expected', ['12345']],
    ["the store's password", 'connection to postgres://store:st0re pw@127.0.0.1 failed', ['st0re pw']],
  ])('%s', (_name, text, hidden) => {
    const output = scrub(text as string, secrets);
    expect(output).toContain('***');
    expectHidden(output, hidden as string[]);
  });

  it('replaces the longest secret first, so a secret holding a shorter one goes whole', () => {
    expect(scrub('x-abcdef-x abc', ['abc', 'abcdef'])).toBe('x-***-x ***');
  });

  it('scrubs every non-empty secret, a one-character one too, and ignores empty ones', () => {
    expect(scrub('a b c', ['b', ''])).toBe('a *** c');
    expect(secretsOf({ backend: 'etcd', password: '' })).toEqual([]);
    expect(scrub('nothing to hide', secretsOf({ sources: [{ url: 'postgres://app@db/app' }] }))).toBe('nothing to hide');
  });

  it('knows every form of one secret', () => {
    expect(secretForms('p@ss/w rd')).toEqual(expect.arrayContaining(['p@ss/w rd', 'p%40ss%2Fw%20rd', 'p%40ss%2fw%20rd']));
    expect(secretForms('p%40ss')).toEqual(expect.arrayContaining(['p%40ss', 'p@ss']));
  });
});

describe("the console's target (lib/queries/console.ts sourceTarget)", () => {
  const pg: SourceConfig = { name: 'pg', backend: 'postgres', url: 'postgres://app:s3 cr@t/x\ty@db.internal:5432/app', tables: [], advisoryLocks: false };
  const redis: SourceConfig = {
    name: 'cache',
    backend: 'redis',
    urls: ['redis://cache-a.internal:6379/0?password=hunt@er2', 'redis://:r3d1s pw@cache-b.internal:6379'],
    match: ['*'],
    fenceSuffix: ':fence',
    keyspaceNotifications: 'auto',
  };
  const etcd: SourceConfig = {
    name: 'etcd',
    backend: 'etcd',
    endpoints: ['http://root:e7cd@pw@127.0.0.1:2379', 'http://[::1]:2379'],
    prefixes: ['a/'],
    username: 'root',
    password: 'field-pw',
  };

  it.each([
    [pg, 'postgres://app:***@db.internal:5432/app', ['s3 cr@t/x\ty']],
    [redis, 'redis://cache-a.internal:6379/0?password=***, redis://:***@cache-b.internal:6379', ['hunt@er2', 'r3d1s pw']],
    [etcd, 'http://root:***@127.0.0.1:2379, http://[::1]:2379', ['e7cd@pw', 'field-pw']],
  ] as const)('%#: shows user, hosts, ports and paths, never a password', (source, target, hidden) => {
    const shown = sourceTarget(source);
    expect(shown).toBe(target);
    expectHidden(shown, [...hidden]);
  });

  it('a password equal to part of the host hides by its place, and the host stays', () => {
    const source: SourceConfig = { ...pg, url: 'postgres://app:internal@db.internal:5432/app' } as SourceConfig;
    expect(sourceTarget(source)).toBe('postgres://app:***@db.internal:5432/app');
  });
});
