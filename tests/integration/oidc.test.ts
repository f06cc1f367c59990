// OIDC sign-in (lib/auth/oidc.ts) against a real provider (oidc-provider on 127.0.0.1):
// the authorization code flow with PKCE end to end, groups to roles from the ID token and
// from userinfo, and every way a callback can be wrong (state, replay, verifier, nonce,
// cancel), an unreachable provider, an http:// issuer not allowed, and the open-redirect
// guard on the page to return to.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oidcSchema, type OidcConfig } from '@/lib/config/auth-schema';
import {
  beginOidcSignIn,
  completeOidcSignIn,
  decodePending,
  encodePending,
  OidcError,
  PENDING_MAX_AGE_MS,
  roleForGroups,
  type OidcPending,
} from '@/lib/auth/oidc';
import { startOidcProvider, type OidcTestAccount, type OidcTestProvider } from '../support/oidc-provider';

const REDIRECT_URI = 'http://127.0.0.1:3999/api/v1/auth/oidc/callback';
const SECRET = 'test-secret-that-is-long-enough-0123456789';
const ACCOUNTS: Record<string, OidcTestAccount> = {
  alice: { groups: ['sre-admins', 'everyone'] },
  bob: { groups: ['sre-oncall'] },
  carol: { groups: ['marketing'] },
  dave: { groups: 'sre-admins' },
  erin: { groups: 42 },
  frank: { groups: ['sre-admins', 7] },
  grace: {},
  heidi: { groups: ['readers', 'sre-admins'], email: null },
};

function configFor(issuer: string, more: Record<string, unknown> = {}): OidcConfig {
  return oidcSchema.parse({
    issuer,
    clientId: 'leasehold',
    clientSecret: SECRET,
    redirectUri: REDIRECT_URI,
    roles: { admin: ['sre-admins'], operator: ['sre-oncall'], viewer: ['readers'] },
    allowInsecureIssuer: true,
    ...more,
  });
}

async function rejection(promise: Promise<unknown>): Promise<OidcError> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(OidcError);
  return error as OidcError;
}

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Counts the provider's userinfo requests. */
function countUserinfo(op: OidcTestProvider): { count: number } {
  const seen = { count: 0 };
  op.provider.use(async (ctx, next) => {
    if (ctx.path === '/me') seen.count++;
    await next();
  });
  return seen;
}

describe('OIDC sign-in against a real provider', () => {
  let op: OidcTestProvider;
  let config: OidcConfig;
  let userinfo: { count: number };

  beforeAll(async () => {
    op = await startOidcProvider({ clientId: 'leasehold', clientSecret: SECRET, redirectUris: [REDIRECT_URI], accounts: ACCOUNTS });
    config = configFor(op.issuer);
    userinfo = countUserinfo(op);
  });
  afterAll(() => op?.stop());

  async function signInAs(login: string) {
    const { url, pending } = await beginOidcSignIn(config, '/leases?source=prod');
    return { callback: await op.signIn(url, login), pending };
  }

  it('sends the browser to the provider with PKCE (S256), state and nonce, and keeps them for the callback', async () => {
    const { url, pending } = await beginOidcSignIn(config, '/failovers?range=1h');
    const params = new URL(url).searchParams;
    expect(url.startsWith(`${op.issuer}/auth?`)).toBe(true);
    expect(params.get('response_type')).toBe('code');
    expect(params.get('client_id')).toBe('leasehold');
    expect(params.get('redirect_uri')).toBe(REDIRECT_URI);
    expect(params.get('scope')).toBe('openid profile email');
    expect(params.get('code_challenge_method')).toBe('S256');
    expect(params.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(params.get('code_challenge')).not.toBe(pending.codeVerifier);
    expect(params.get('state')).toBe(pending.state);
    expect(params.get('nonce')).toBe(pending.nonce);
    expect(pending.returnTo).toBe('/failovers?range=1h');
    expect(decodePending(encodePending(pending))).toEqual(pending);
  });

  it('signs alice in, in sre-admins: admin, with her name, email and groups from the ID token', async () => {
    const { callback, pending } = await signInAs('alice');
    expect(callback.searchParams.get('code')).toBeTruthy();
    const before = userinfo.count;
    const identity = await completeOidcSignIn(config, callback, pending);
    expect(identity).toEqual({
      issuer: op.issuer,
      subject: 'alice',
      name: 'alice',
      email: 'alice@example.test',
      groups: ['sre-admins', 'everyone'],
      role: 'admin',
    });
    expect(userinfo.count).toBe(before);
  });

  it('maps sre-oncall to operator, a group of no role to null, and the highest role of several', async () => {
    const bob = await signInAs('bob');
    expect((await completeOidcSignIn(config, bob.callback, bob.pending)).role).toBe('operator');
    const carol = await signInAs('carol');
    expect(await completeOidcSignIn(config, carol.callback, carol.pending)).toMatchObject({ name: 'carol', groups: ['marketing'], role: null });
    const heidi = await signInAs('heidi');
    expect(await completeOidcSignIn(config, heidi.callback, heidi.pending)).toMatchObject({ email: null, role: 'admin' });
  });

  it('takes a single-string groups claim as one group, and anything else as no groups', async () => {
    for (const [login, groups, role] of [['dave', ['sre-admins'], 'admin'], ['erin', [], null], ['frank', [], null], ['grace', [], null]] as const) {
      const { callback, pending } = await signInAs(login);
      expect(await completeOidcSignIn(config, callback, pending), login).toMatchObject({ groups, role });
    }
  });

  it('completes from the callback URL as this server saw it (another host, behind a proxy): the token request names the configured redirect URI', async () => {
    const { callback, pending } = await signInAs('bob');
    const seen = new URL(`http://localhost:3000/api/v1/auth/oidc/callback${callback.search}`);
    expect((await completeOidcSignIn(config, seen, pending)).subject).toBe('bob');
  });

  it('refuses a callback whose state is not the pending one, and a pending sign-in too old', async () => {
    const { callback, pending } = await signInAs('alice');
    const other = (await beginOidcSignIn(config, '/')).pending;
    const error = await rejection(completeOidcSignIn(config, callback, { ...pending, state: other.state }));
    expect(error.reason).toBe('state');
    const noState = new URL(callback);
    noState.searchParams.delete('state');
    expect((await rejection(completeOidcSignIn(config, noState, pending))).reason).toBe('state');
    const stale = await rejection(completeOidcSignIn(config, callback, { ...pending, createdAt: Date.now() - PENDING_MAX_AGE_MS - 1 }));
    expect(stale.reason).toBe('expired');
  });

  it('refuses a replayed code (the same callback completed twice)', async () => {
    const { callback, pending } = await signInAs('alice');
    await completeOidcSignIn(config, callback, pending);
    const error = await rejection(completeOidcSignIn(config, callback, pending));
    expect(error.reason).toBe('exchange');
    expect(error.message).toContain('invalid_grant');
    expect(error.message).not.toContain(callback.searchParams.get('code')!);
  });

  it('refuses a wrong PKCE verifier and a wrong nonce', async () => {
    const first = await signInAs('alice');
    const verifier = (await beginOidcSignIn(config, '/')).pending.codeVerifier;
    expect((await rejection(completeOidcSignIn(config, first.callback, { ...first.pending, codeVerifier: verifier }))).reason).toBe('exchange');
    const second = await signInAs('alice');
    const nonce = (await beginOidcSignIn(config, '/')).pending.nonce;
    expect((await rejection(completeOidcSignIn(config, second.callback, { ...second.pending, nonce }))).reason).toBe('id_token');
  });

  it('tells a cancelled sign-in by the provider\'s error code', async () => {
    const { url, pending } = await beginOidcSignIn(config, '/');
    const callback = await op.cancel(url);
    expect(callback.searchParams.get('error')).toBe('access_denied');
    const error = await rejection(completeOidcSignIn(config, callback, pending));
    expect(error.reason).toBe('refused');
    expect(error.message).toContain('(access_denied)');
  });

  it('refuses a page to return to that is not a path of this server, before any request', async () => {
    for (const returnTo of ['//evil.example', 'https://evil.example', '/\\evil.example', 'evil', '', '/a\nb']) {
      expect((await rejection(beginOidcSignIn(config, returnTo))).reason, JSON.stringify(returnTo)).toBe('return_to');
    }
  });

  it('refuses an http:// issuer unless allowInsecureIssuer: the config check first, and the sign-in too', async () => {
    const checked = oidcSchema.safeParse({ ...configFor(op.issuer), allowInsecureIssuer: false });
    expect(checked.success).toBe(false);
    expect(checked.error?.issues[0]).toMatchObject({ path: ['issuer'], message: expect.stringContaining('expected an https:// issuer') });
    // A config made some other way is refused at sign-in all the same.
    const error = await rejection(beginOidcSignIn({ ...configFor(op.issuer), allowInsecureIssuer: false }, '/'));
    expect(error.reason).toBe('config');
    expect(error.message).toContain(new URL(op.issuer).host);
  });
});

describe('OIDC sign-in with a public client and groups in userinfo only', () => {
  it('reads the groups (and the name) from userinfo when the ID token lacks them', async () => {
    const op = await startOidcProvider({ clientId: 'leasehold-public', redirectUris: [REDIRECT_URI], accounts: ACCOUNTS, claimsInIdToken: false });
    try {
      const userinfo = countUserinfo(op);
      const config = configFor(op.issuer, { clientId: 'leasehold-public', clientSecret: undefined });
      const { url, pending } = await beginOidcSignIn(config, '/');
      const identity = await completeOidcSignIn(config, await op.signIn(url, 'alice'), pending);
      expect(identity).toMatchObject({ name: 'alice', email: 'alice@example.test', groups: ['sre-admins', 'everyone'], role: 'admin' });
      expect(userinfo.count).toBe(1);
    } finally {
      await op.stop();
    }
  });
});

describe('OIDC sign-in with a provider that cannot be reached', () => {
  it('fails quickly with an OidcError naming the host, and tries discovery again next time', async () => {
    const port = await closedPort();
    const config = configFor(`http://127.0.0.1:${port}`);
    const started = Date.now();
    const error = await rejection(beginOidcSignIn(config, '/'));
    expect(Date.now() - started).toBeLessThan(3000);
    expect(error.reason).toBe('unreachable');
    expect(error.message).toContain(`127.0.0.1:${port}`);
    expect(error.message).not.toMatch(/\n\s+at |ECONNREFUSED|fetch failed/);
    expect(error.detail).toContain('ECONNREFUSED');

    // The failure was not kept: once the provider is there, the same configuration works.
    const op = await startOidcProvider({ clientId: 'leasehold', clientSecret: SECRET, redirectUris: [REDIRECT_URI], accounts: ACCOUNTS, port });
    try {
      const { url, pending } = await beginOidcSignIn(config, '/');
      expect((await completeOidcSignIn(config, await op.signIn(url, 'bob'), pending)).role).toBe('operator');
    } finally {
      await op.stop();
    }
  });
});

describe('the pending sign-in cookie and the role mapping (pure)', () => {
  const now = 1_800_000_000_000;
  const pending: OidcPending = { state: 'a'.repeat(43), nonce: 'b'.repeat(43), codeVerifier: 'c'.repeat(43), returnTo: '/leases', createdAt: now };
  const raw = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

  it('reads back what it wrote, within ten minutes', () => {
    expect(decodePending(encodePending(pending), now + PENDING_MAX_AGE_MS)).toEqual(pending);
  });

  it('refuses garbage, missing fields, an unsafe page to return to, and an old or future pending sign-in', () => {
    for (const text of ['', 'not base64!', raw('text'), raw([1]), raw(null), 'eyJ', 'x'.repeat(5000)]) expect(decodePending(text, now), text.slice(0, 20)).toBeNull();
    expect(decodePending(raw({ ...pending, nonce: undefined }), now)).toBeNull();
    expect(decodePending(raw({ ...pending, state: 'short' }), now)).toBeNull();
    expect(decodePending(raw({ ...pending, createdAt: 'yesterday' }), now)).toBeNull();
    for (const returnTo of ['//evil.example', 'https://evil.example', '/\\evil.example']) expect(decodePending(raw({ ...pending, returnTo }), now)).toBeNull();
    expect(decodePending(encodePending(pending), now + PENDING_MAX_AGE_MS + 1)).toBeNull();
    expect(decodePending(encodePending(pending), now - 5 * 60_000)).toBeNull();
  });

  it('gives the highest role whose groups meet the user\'s', () => {
    const config = configFor('https://id.example.com', { roles: { admin: ['a'], operator: ['o', 'x'], viewer: ['v', 'x'] } });
    expect(roleForGroups(config, ['v', 'o'])).toBe('operator');
    expect(roleForGroups(config, ['x'])).toBe('operator');
    expect(roleForGroups(config, ['v', 'a'])).toBe('admin');
    expect(roleForGroups(config, ['v'])).toBe('viewer');
    expect(roleForGroups(config, ['nobody'])).toBeNull();
    expect(roleForGroups(config, [])).toBeNull();
  });
});
