// Host and Origin rules (lib/api/host.ts), the JSON body reader (lib/api/body.ts) and the
// LEASEHOLD_ALLOWED_HOSTS setting (lib/config/schema.ts): issue 13, point 10.
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { isJsonContentType, readJsonBody, readOptionalJsonBody } from '../../lib/api/body';
import { checkHost, checkOrigin, hostAllowed, hostRule, machineHosts, parseAllowedHosts, parseHostPattern } from '../../lib/api/host';
import { RequestRefusedError } from '../../lib/api/refusal';
import { ConfigError } from '../../lib/config';
import { loadAppConfig } from '../../lib/root';

const refusal = (run: () => unknown): { status: number; code: string; message: string } | null => {
  try {
    run();
    return null;
  } catch (error) {
    if (error instanceof RequestRefusedError) return { status: error.status, code: error.code, message: error.message };
    throw error;
  }
};

describe('host patterns', () => {
  it.each([
    ['localhost', { host: 'localhost', port: null }],
    ['LocalHost.:3000', { host: 'localhost', port: 3000 }],
    ['127.0.0.1:3101', { host: '127.0.0.1', port: 3101 }],
    ['[::1]', { host: '::1', port: null }],
    ['[::1]:3000', { host: '::1', port: 3000 }],
    ['::1', { host: '::1', port: null }],
    ['leasehold_app', { host: 'leasehold_app', port: null }],
    ['console.example.com:443', { host: 'console.example.com', port: 443 }],
  ])('%s', (text, pattern) => {
    expect(parseHostPattern(text)).toEqual(pattern);
  });

  it.each(['', 'a:0', 'a:65536', 'a:99999999', 'a b', 'evil.example\u0000', 'http://a', 'a/b', '[::1', '[nothost]:1', 'a:b', '*', '-a', 'a..b', 'x'.repeat(400)].map((text) => ({ name: text.length > 40 ? `${text.slice(0, 20)}... (${text.length} chars)` : JSON.stringify(text), text })))('$name is not a host', ({ text }) => {
    expect(parseHostPattern(text)).toBeNull();
  });

  it('LEASEHOLD_ALLOWED_HOSTS: a comma-separated list, * allowed, any bad entry spoils it', () => {
    expect(parseAllowedHosts(' Console.example.com , 10.0.0.5:3000,[::1]:3000 ')).toEqual(['console.example.com', '10.0.0.5:3000', '[::1]:3000']);
    expect(parseAllowedHosts('*')).toEqual(['*']);
    expect(parseAllowedHosts('ok.example, bad host')).toBeNull();
    expect(parseAllowedHosts(' , ')).toBeNull();
  });
});

describe('the Host rule', () => {
  const loopback = hostRule('127.0.0.1', null);

  it.each(['localhost', 'localhost:3000', 'LOCALHOST:1', '127.0.0.1', '127.0.0.1:3101', '[::1]:3000', 'localhost.:3000'])('default: %s is allowed', (host) => {
    expect(hostAllowed(loopback, host)).toBe(true);
  });

  it.each(
    [null, '', 'evil.example', 'evil.example:3000', 'localhost.evil.example', '127.0.0.1.evil.example', '127.0.0.2', '0.0.0.0', '[::2]', 'localhost:0', 'localhost\u0000', 'a'.repeat(10_000)].map((host) => ({
      name: host !== null && host.length > 40 ? `${host.slice(0, 20)}... (${host.length} chars)` : JSON.stringify(host),
      host,
    })),
  )('default: $name is refused', ({ host }) => {
    expect(hostAllowed(loopback, host)).toBe(false);
  });

  it('HOST is allowed with any port; on 0.0.0.0 also the machine name and its addresses', () => {
    expect(hostAllowed(hostRule('192.0.2.10', null), '192.0.2.10:3000')).toBe(true);
    expect(hostAllowed(hostRule('console.internal', null), 'console.internal')).toBe(true);
    expect(hostAllowed(hostRule('127.0.0.1', null), os.hostname())).toBe(os.hostname().toLowerCase() === 'localhost');
    for (const bind of ['0.0.0.0', '::', '[::]']) {
      const rule = hostRule(bind, null);
      for (const { host } of machineHosts()) expect(hostAllowed(rule, host.includes(':') ? `[${host}]:3000` : `${host}:3000`)).toBe(true);
      expect(hostAllowed(rule, 'evil.example')).toBe(false);
    }
  });

  it('LEASEHOLD_ALLOWED_HOSTS replaces the default; * allows any', () => {
    const rule = hostRule('0.0.0.0', ['console.example.com', 'leasehold:3000']);
    expect(hostAllowed(rule, 'console.example.com:8443')).toBe(true);
    expect(hostAllowed(rule, 'leasehold:3000')).toBe(true);
    expect(hostAllowed(rule, 'leasehold:3001')).toBe(false);
    expect(hostAllowed(rule, 'localhost:3000')).toBe(false);
    expect(hostAllowed(hostRule('127.0.0.1', ['*']), 'anything.example')).toBe(true);
  });

  it('a refusal is a 421 that says how to allow the name; health checks pass whatever the Host', () => {
    const headers = new Headers({ host: 'evil.example' });
    const refused = refusal(() => checkHost(loopback, headers, '/api/v1/leases', 'GET'));
    expect(refused).toMatchObject({ status: 421, code: 'host_not_allowed' });
    expect(refused!.message).toContain('LEASEHOLD_ALLOWED_HOSTS');
    expect(refused!.message).toContain('"evil.example"');
    expect(refusal(() => checkHost(loopback, headers, '/api/health/live', 'GET'))).toBeNull();
    expect(refusal(() => checkHost(loopback, headers, '/api/health', 'HEAD'))).toBeNull();
    expect(refusal(() => checkHost(loopback, headers, '/api/health', 'POST'))).toMatchObject({ status: 421 });
    expect(refusal(() => checkHost(loopback, new Headers(), '/', 'GET'))).toMatchObject({ status: 421 });
  });
});

describe('the Origin rule for state-changing requests', () => {
  const check = (method: string, headers: Record<string, string>) => refusal(() => checkOrigin(new Headers({ host: '127.0.0.1:3101', ...headers }), method));

  it.each([
    ['GET', { origin: 'https://evil.example' }],
    ['OPTIONS', { origin: 'https://evil.example' }],
    ['POST', {}],
    ['POST', { origin: 'http://127.0.0.1:3101' }],
    ['DELETE', { origin: 'https://127.0.0.1:3101' }],
    ['POST', { 'sec-fetch-site': 'same-origin' }],
    ['POST', { 'sec-fetch-site': 'none' }],
  ])('%s with %j is served', (method, headers) => {
    expect(check(method, headers)).toBeNull();
  });

  it.each([
    ['POST', { origin: 'https://evil.example' }],
    ['POST', { origin: 'http://127.0.0.1:3102' }],
    ['POST', { origin: 'http://localhost:3101' }],
    ['POST', { origin: 'http://127.0.0.1' }],
    ['PUT', { origin: 'null' }],
    ['PATCH', { origin: 'file:///tmp/x.html' }],
    ['DELETE', { origin: 'not a url' }],
    ['POST', { 'sec-fetch-site': 'cross-site' }],
    ['POST', { 'sec-fetch-site': 'same-site' }],
    ['POST', { origin: 'https://evil.example', 'sec-fetch-site': 'same-origin' }],
  ])('%s with %j is a 403', (method, headers) => {
    expect(check(method, headers)).toMatchObject({ status: 403, code: 'cross_origin' });
  });

  it('IPv6 and default ports compare as the browser writes them', () => {
    expect(refusal(() => checkOrigin(new Headers({ host: '[::1]:3000', origin: 'http://[::1]:3000' }), 'POST'))).toBeNull();
    expect(refusal(() => checkOrigin(new Headers({ host: 'console.example', origin: 'http://console.example' }), 'POST'))).toBeNull();
    expect(refusal(() => checkOrigin(new Headers({ host: 'console.example:443', origin: 'https://console.example' }), 'POST'))).toBeNull();
  });
});

describe('readJsonBody', () => {
  const post = (body: BodyInit | null, headers: Record<string, string> = {}) =>
    new Request('http://127.0.0.1:3000/api/v1/demo', { method: 'POST', body, headers: { host: '127.0.0.1:3000', 'content-type': 'application/json', ...headers }, duplex: 'half' } as RequestInit);
  const outcome = async (request: Request, limitBytes = 1_024) => {
    try {
      return { value: await readJsonBody(request, { limitBytes }) };
    } catch (error) {
      if (error instanceof RequestRefusedError) return { status: error.status, code: error.code };
      throw error;
    }
  };

  it('reads JSON', async () => {
    expect(await outcome(post('{"faults":true}'))).toEqual({ value: { faults: true } });
    expect(await outcome(post('{"faults":false}', { 'content-type': 'application/json; charset=UTF-8' }))).toEqual({ value: { faults: false } });
  });

  it.each([
    ['text/plain', 415],
    ['application/x-www-form-urlencoded', 415],
    ['multipart/form-data; boundary=x', 415],
    ['application/json; charset=latin1', 415],
    ['application/jsonp', 415],
  ])('Content-Type %s is refused', async (type, status) => {
    expect(await outcome(post('{"faults":true}', { 'content-type': type }))).toMatchObject({ status });
  });

  it('no Content-Type is refused', async () => {
    const request = new Request('http://127.0.0.1:3000/api/v1/demo', { method: 'POST', body: new Uint8Array([123, 125]), headers: { host: '127.0.0.1:3000' } });
    expect(await outcome(request)).toMatchObject({ status: 415 });
  });

  it.each([
    ['', 400],
    ['{', 400],
    ['\u0000', 400],
    [new Uint8Array([0x7b, 0xff, 0x7d]), 400],
  ])('%j is an invalid body', async (body, status) => {
    expect(await outcome(post(body))).toMatchObject({ status, code: 'invalid_body' });
  });

  it('a body over the limit is refused from its Content-Length, unread', async () => {
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(1_024));
      },
    });
    expect(await outcome(post(endless, { 'content-length': '104857600' }))).toMatchObject({ status: 413, code: 'body_too_large' });
    expect(pulled).toBeLessThanOrEqual(1);
  });

  it('a body without a Content-Length is read only up to the limit', async () => {
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(256).fill(0x20));
      },
    });
    expect(await outcome(post(endless))).toMatchObject({ status: 413 });
    expect(pulled).toBeLessThan(10);
  });

  it('Host and Origin are checked first (the proxy does not see these requests)', async () => {
    expect(await outcome(post('{"faults":true}', { host: 'evil.example' }))).toMatchObject({ status: 421 });
    expect(await outcome(post('{"faults":true}', { origin: 'https://evil.example' }))).toMatchObject({ status: 403 });
    expect(await outcome(post('{"faults":true}', { origin: 'http://127.0.0.1:3000' }))).toEqual({ value: { faults: true } });
  });

  it.each([
    ['{"reason":"stuck\\u0000"}', 'The field "reason"'],
    ['{"rules":["failover","x\\u0000"]}', 'The field "rules.1"'],
    ['{"params":{"a":{"b":"\\u0000"}}}', 'The field "params.a.b"'],
    ['{"x\\u0000":1}', 'The field "x\\x00"'],
    ['"\\u0000"', 'The body holds'],
  ])('U+0000 anywhere in %s is a 400 naming where (PostgreSQL cannot store it)', async (body, named) => {
    const request = post(body);
    const error = await readJsonBody(request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestRefusedError);
    expect(error).toMatchObject({ status: 400, code: 'invalid_body' });
    expect((error as Error).message).toContain(named);
  });

  it.each([
    ['{"holder":"a\\ud800b"}', 'The field "holder"'],
    ['{"reports":[{"lease":"x\\udc00"}]}', 'The field "reports.0.lease"'],
    ['{"x\\udbff":1}', 'The field "x'],
  ])('a lone UTF-16 surrogate in %s is a 400 naming where (jsonb refuses it)', async (body, named) => {
    const error = await readJsonBody(post(body)).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, code: 'invalid_body' });
    expect((error as Error).message).toContain(named);
    expect((error as Error).message).toContain('lone UTF-16 surrogate');
  });

  it('a surrogate pair is a character like any other', async () => {
    expect(await outcome(post('{"reason":"\\ud83d\\ude00"}'))).toEqual({ value: { reason: '\u{1F600}' } });
  });

  it('an escaped backslash before u0000 is just text', async () => {
    expect(await outcome(post('{"reason":"C:\\\\u0000"}'))).toEqual({ value: { reason: 'C:\\u0000' } });
  });

  it('an optional body: empty (Content-Length: 0, no Content-Type) is none; anything else is checked as readJsonBody checks it', async () => {
    const bare = (body: BodyInit | null, headers: Record<string, string> = {}) =>
      new Request('http://127.0.0.1:3000/api/v1/auth/logout', { method: 'POST', body, headers: { host: '127.0.0.1:3000', ...headers } });
    const optional = (request: Request) => readOptionalJsonBody(request).catch((e: unknown) => e);
    expect(await optional(bare(null))).toBeUndefined();
    expect(await optional(bare(new Uint8Array(0), { 'content-length': '0' }))).toBeUndefined();
    expect(await optional(bare('', { 'content-type': 'text/plain' }))).toBeUndefined();
    expect(await optional(bare('{"everywhere":true}', { 'content-type': 'application/json' }))).toEqual({ everywhere: true });
    expect(await optional(bare('{"everywhere":true}', { 'content-type': 'text/plain' }))).toMatchObject({ status: 415 });
    expect(await optional(bare('{"everywhere":true}'))).toMatchObject({ status: 415 });
    expect(await optional(bare('{"x":"\\u0000"}', { 'content-type': 'application/json' }))).toMatchObject({ status: 400 });
    expect(await optional(bare('', { host: 'evil.example' }))).toMatchObject({ status: 421 });
  });

  it('isJsonContentType', () => {
    expect(isJsonContentType('application/json')).toBe(true);
    expect(isJsonContentType('Application/JSON ;charset="utf-8"')).toBe(true);
    expect(isJsonContentType(null)).toBe(false);
  });
});

describe('LEASEHOLD_ALLOWED_HOSTS in the config', () => {
  it('is read as a list; absent, the default (null)', () => {
    expect(loadAppConfig({ env: { LEASEHOLD_ALLOWED_HOSTS: 'console.example.com, 10.0.0.5:3000' }, cwd: os.tmpdir() }).allowedHosts).toEqual(['console.example.com', '10.0.0.5:3000']);
    expect(loadAppConfig({ env: {}, cwd: os.tmpdir() }).allowedHosts).toBeNull();
    expect(loadAppConfig({ env: { LEASEHOLD_ALLOWED_HOSTS: ' ' }, cwd: os.tmpdir() }).allowedHosts).toBeNull();
  });

  it('a bad entry is a config problem naming the variable', () => {
    expect(() => loadAppConfig({ env: { LEASEHOLD_ALLOWED_HOSTS: 'ok.example, http://bad' }, cwd: os.tmpdir() })).toThrow(ConfigError);
    expect(() => loadAppConfig({ env: { LEASEHOLD_ALLOWED_HOSTS: 'ok.example, http://bad' }, cwd: os.tmpdir() })).toThrow(
      /environment variable LEASEHOLD_ALLOWED_HOSTS: expected a comma-separated list of host names or addresses.*found "ok.example, http:\/\/bad"/,
    );
  });
});
