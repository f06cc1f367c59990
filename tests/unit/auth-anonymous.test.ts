// Who may use the server without signing in (lib/auth/principal.ts anonymousRole): the config
// file's auth.anonymousRole, overridden by LEASEHOLD_ANONYMOUS_ROLE; absent, only the embedded
// demo from this machine may read. And what authenticate() makes of a request with no
// credentials or a malformed Authorization header, before it ever asks the store.
import { afterAll, describe, expect, it } from 'vitest';
import { PEER_HEADER } from '../../lib/api/peer';
import { AuthError } from '../../lib/auth/errors';
import { anonymousRole, authenticate } from '../../lib/auth/principal';
import type { Store } from '../../lib/db/store';
import { configFiles } from '../support/config-files';

const { configOf, remove } = configFiles('anonymous');
afterAll(remove);

const POSTGRES = { DATABASE_URL: 'postgres://leasehold@127.0.0.1:5432/leasehold' };
const LOOPBACK = ['127.0.0.1', '127.8.9.10', '::1'];
const ELSEWHERE = ['10.0.0.1', '192.168.1.20', '203.0.113.7', '2001:db8::1', 'unknown'];

/** A store any use of which fails the test: these requests must be decided without it. */
const untouchable = new Proxy({}, {
  get(_target, property) {
    throw new Error(`the store was used (${String(property)})`);
  },
}) as Store;

const from = (peer: string, headers: Record<string, string> = {}) => new Headers({ [PEER_HEADER]: peer, ...headers });

describe('anonymousRole', () => {
  it('absent: viewer on the embedded demo from this machine only', () => {
    const demo = configOf(undefined);
    expect(demo.demo).toBe(true);
    expect(demo.auth.anonymousRole).toBeUndefined();
    for (const address of LOOPBACK) expect(anonymousRole(demo, address), address).toBe('viewer');
    for (const address of ELSEWHERE) expect(anonymousRole(demo, address), address).toBeNull();
  });

  it('absent, and not the demo (PostgreSQL store, or LEASEHOLD_DEMO=off): nobody, not even this machine', () => {
    for (const config of [configOf(undefined, POSTGRES), configOf(undefined, { LEASEHOLD_DEMO: 'off' }), configOf({ auth: {} }, POSTGRES)]) {
      expect(config.demo).toBe(false);
      for (const address of [...LOOPBACK, ...ELSEWHERE]) expect(anonymousRole(config, address), address).toBeNull();
    }
  });

  it('"viewer" in the file: viewer from any address, demo or not', () => {
    for (const config of [configOf({ auth: { anonymousRole: 'viewer' } }), configOf({ auth: { anonymousRole: 'viewer' } }, POSTGRES)]) {
      for (const address of [...LOOPBACK, ...ELSEWHERE]) expect(anonymousRole(config, address), address).toBe('viewer');
    }
  });

  it('"none" or null in the file: nobody, even the demo from this machine', () => {
    for (const value of ['none', null]) {
      const config = configOf({ auth: { anonymousRole: value } });
      expect(config.demo).toBe(true);
      for (const address of [...LOOPBACK, ...ELSEWHERE]) expect(anonymousRole(config, address), `${value} ${address}`).toBeNull();
    }
  });

  it('LEASEHOLD_ANONYMOUS_ROLE overrides the file, either way', () => {
    const opened = configOf({ auth: { anonymousRole: 'none' } }, { ...POSTGRES, LEASEHOLD_ANONYMOUS_ROLE: 'viewer' });
    expect(anonymousRole(opened, '10.0.0.1')).toBe('viewer');
    const closed = configOf({ auth: { anonymousRole: 'viewer' } }, { LEASEHOLD_ANONYMOUS_ROLE: 'none' });
    expect(anonymousRole(closed, '10.0.0.1')).toBeNull();
    expect(anonymousRole(closed, '127.0.0.1')).toBeNull();
    // On the demo with no file: "none" closes even this machine.
    expect(anonymousRole(configOf(undefined, { LEASEHOLD_ANONYMOUS_ROLE: 'none' }), '127.0.0.1')).toBeNull();
    // Blank is unset.
    expect(anonymousRole(configOf(undefined, { ...POSTGRES, LEASEHOLD_ANONYMOUS_ROLE: ' ' }), '10.0.0.1')).toBeNull();
  });

  it('refuses any other value, in the file or the environment (anonymous users may only read)', () => {
    expect(() => configOf({ auth: { anonymousRole: 'admin' } })).toThrow(/auth\.anonymousRole: expected "viewer" or "none"/);
    expect(() => configOf(undefined, { LEASEHOLD_ANONYMOUS_ROLE: 'operator' })).toThrow(/LEASEHOLD_ANONYMOUS_ROLE: expected "viewer" or "none"/);
  });
});

describe('authenticate without credentials', () => {
  const demo = configOf(undefined);

  it('the demo from this machine is an anonymous viewer, at the address the request came from', async () => {
    expect(await authenticate(untouchable, demo, from('127.0.0.1'))).toEqual({
      name: 'anonymous',
      role: 'viewer',
      method: 'anonymous',
      userId: null,
      tokenId: null,
      sessionId: null,
      address: '127.0.0.1',
    });
  });

  it('from elsewhere it is nobody: directly, through a trusted proxy here, or claiming to be here in X-Forwarded-For', async () => {
    expect(await authenticate(untouchable, demo, from('10.0.0.1'))).toBeNull();
    // A reverse proxy on this machine, named in trustedProxies, forwarding a remote client.
    const behindProxy = configOf({ trustedProxies: ['127.0.0.1'] });
    expect(behindProxy.demo).toBe(true);
    expect(await authenticate(untouchable, behindProxy, from('127.0.0.1', { 'x-forwarded-for': '10.0.0.1' }))).toBeNull();
    // A public client cannot speak for itself through X-Forwarded-For, trusted proxies or not.
    expect(await authenticate(untouchable, demo, from('203.0.113.7', { 'x-forwarded-for': '127.0.0.1' }))).toBeNull();
    expect(await authenticate(untouchable, behindProxy, from('203.0.113.7', { 'x-forwarded-for': '127.0.0.1' }))).toBeNull();
    // No address known at all.
    expect(await authenticate(untouchable, demo, new Headers())).toBeNull();
  });

  it('a proxy here that is not named in trustedProxies is this machine, for every client behind it', async () => {
    // Its X-Forwarded-For is not believed (security.md, Anonymous access: name the proxy).
    expect(await authenticate(untouchable, demo, from('127.0.0.1', { 'x-forwarded-for': '10.0.0.1' }))).toMatchObject({ method: 'anonymous', address: '127.0.0.1' });
  });

  it.each([
    ['another scheme', 'Basic dXNlcjpwYXNz'],
    ['Bearer and nothing', 'Bearer'],
    ['Bearer and blanks', 'Bearer   '],
    ['two words', 'Bearer lh_0123456789abcdef_x y'],
    ['a bare token', 'lh_0123456789abcdef_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
    ['not a token', 'Bearer hunter2'],
    ['a short secret', 'Bearer lh_0123456789abcdef_AAAA'],
    ['upper-case id', 'Bearer lh_0123456789ABCDEF_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
    ['empty', ''],
  ])('a malformed Authorization header (%s) is 401 invalid_token, never anonymous, never a store query', async (_label, authorization) => {
    const error = await authenticate(untouchable, demo, from('127.0.0.1', { authorization })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthError);
    expect(error).toMatchObject({ status: 401, code: 'invalid_token' });
  });
});
