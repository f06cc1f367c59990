// A real OpenID Connect provider (the oidc-provider package, not a mock) on 127.0.0.1, for
// tests of Leasehold's OIDC sign-in: one client (confidential with a secret, or public
// without), the accounts the test names with their groups, PKCE required, its own signing
// key. Its sign-in page is a plain HTML form with one "login" field (any known account, no
// password) and a Cancel button, so that a browser (Playwright) can use it as a person
// would; consent is given on the user's behalf (a first-party client). `signIn` does what
// that browser would, with fetch: from an authorization URL to the redirect back to the
// client, which it returns without visiting.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type Account, type Configuration, type Interaction } from 'oidc-provider';

export type OidcTestAccount = {
  /** The groups claim as the provider sends it: a list, one string, or anything else (to test claims that are not groups); left out when undefined. */
  groups?: unknown;
  /** Default `<login>@example.test`; null: no email claim. */
  email?: string | null;
  /** The `name` claim; default the login. */
  name?: string;
};

export type OidcProviderOptions = {
  clientId: string;
  /** A confidential client's secret (client_secret_basic); undefined: a public client (PKCE alone). */
  clientSecret?: string;
  redirectUris: string[];
  /** By login (also the subject and preferred_username). */
  accounts: Record<string, OidcTestAccount>;
  /** true (default): the ID token carries the profile, email and groups claims too; false: only userinfo does (a client must ask it). */
  claimsInIdToken?: boolean;
  /** Port on 127.0.0.1; 0 (default): a free one. */
  port?: number;
};

export type OidcTestProvider = {
  /** http://127.0.0.1:<port> */
  issuer: string;
  port: number;
  /** The oidc-provider instance, for what this helper does not offer (its events, its models). */
  provider: Provider;
  /** From an authorization URL of this provider, signs in as `login` and returns the URL the provider redirects the browser to (a redirect URI with code, state and iss). */
  signIn(authorizationUrl: string, login: string): Promise<URL>;
  /** Like signIn, but the user presses Cancel: the redirect URI with error=access_denied. */
  cancel(authorizationUrl: string): Promise<URL>;
  stop(): Promise<void>;
};

const PAGE_STYLE = 'body{font-family:system-ui,sans-serif;max-width:24rem;margin:4rem auto}label,input,button{display:block;margin:.5rem 0}';

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function loginPage(uid: string, clientId: string, login: string, problem: string | null): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Test identity provider: sign in</title><style>${PAGE_STYLE}</style></head><body>
<h1>Test identity provider</h1><p>Sign in to <strong>${escapeHtml(clientId)}</strong>.</p>
${problem ? `<p role="alert">${escapeHtml(problem)}</p>` : ''}
<form method="post" action="/interaction/${encodeURIComponent(uid)}">
<label for="login">Login</label><input id="login" name="login" autocomplete="username" required autofocus value="${escapeHtml(login)}">
<button type="submit">Sign in</button><button type="submit" name="cancel" value="1" formnovalidate>Cancel</button>
</form></body></html>`;
}

function readForm(req: http.IncomingMessage): Promise<URLSearchParams> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > 64 * 1024) req.destroy(new Error('form too large'));
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(new URLSearchParams(Buffer.concat(chunks).toString('utf8'))));
    req.on('error', reject);
  });
}

/** The consent prompt, answered yes: a grant of what the client asked for. */
async function consent(provider: Provider, details: Interaction, req: http.IncomingMessage, res: http.ServerResponse) {
  const { prompt, grantId, session, params } = details;
  const grant = grantId ? await provider.Grant.find(grantId) : new provider.Grant({ accountId: session!.accountId, clientId: String(params.client_id) });
  if (!grant) throw new Error('the grant of this interaction is gone');
  const missing = prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[]; missingResourceScopes?: Record<string, string[]> };
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.join(' '));
  await provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
}

/** GET /interaction/:uid shows the login form (or answers consent); POST signs in as the login given, or cancels. */
async function interaction(provider: Provider, options: OidcProviderOptions, req: http.IncomingMessage, res: http.ServerResponse) {
  const details = await provider.interactionDetails(req, res);
  if (details.prompt.name === 'consent') return consent(provider, details, req, res);
  if (details.prompt.name !== 'login') throw new Error(`no page for the "${details.prompt.name}" prompt`);
  const page = (status: number, login: string, problem: string | null) => {
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(loginPage(details.uid, options.clientId, login, problem));
  };
  if (req.method === 'GET') return page(200, typeof details.params.login_hint === 'string' ? details.params.login_hint : '', null);
  if (req.method !== 'POST') return void res.writeHead(405).end();
  const form = await readForm(req);
  if (form.get('cancel')) {
    return provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'The user cancelled the sign-in' }, { mergeWithLastSubmission: false });
  }
  const login = form.get('login') ?? '';
  if (!Object.hasOwn(options.accounts, login)) return page(200, login, `There is no user "${login}" here.`);
  await provider.interactionFinished(req, res, { login: { accountId: login } }, { mergeWithLastSubmission: false });
}

function configuration(options: OidcProviderOptions): Configuration {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid: randomBytes(8).toString('hex'), use: 'sig', alg: 'RS256' };
  const findAccount = (_ctx: unknown, id: string): Account | undefined => {
    if (!Object.hasOwn(options.accounts, id)) return undefined;
    const account = options.accounts[id]!;
    const email = account.email === undefined ? `${id}@example.test` : account.email;
    return {
      accountId: id,
      claims: () => ({
        sub: id,
        preferred_username: id,
        name: account.name ?? id,
        ...(email === null ? {} : { email, email_verified: true }),
        ...(account.groups === undefined ? {} : { groups: account.groups }),
      }),
    };
  };
  return {
    clients: [
      {
        client_id: options.clientId,
        ...(options.clientSecret === undefined ? { token_endpoint_auth_method: 'none' } : { client_secret: options.clientSecret, token_endpoint_auth_method: 'client_secret_basic' }),
        redirect_uris: options.redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    findAccount,
    // groups under "profile" too, so that a client asking the usual scopes gets them.
    claims: { openid: ['sub'], profile: ['preferred_username', 'name', 'groups'], email: ['email', 'email_verified'], groups: ['groups'] },
    scopes: ['openid', 'profile', 'email', 'groups'],
    conformIdTokenClaims: options.claimsInIdToken === false,
    pkce: { required: () => true },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, details) => `/interaction/${details.uid}` },
    jwks: { keys: [jwk] },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    // Seconds; set so that the provider does not note its defaults at every first use.
    ttl: { AuthorizationCode: 60, AccessToken: 600, IdToken: 600, Interaction: 600, Session: 3600, Grant: 3600 },
  };
}

function storeCookies(jar: Map<string, string>, response: Response) {
  for (const line of response.headers.getSetCookie()) {
    const [pair, ...attributes] = line.split(';');
    const at = pair!.indexOf('=');
    const name = pair!.slice(0, at).trim();
    const value = pair!.slice(at + 1).trim();
    const expired = attributes.some((a) => /^\s*expires=.*1970/i.test(a) || /^\s*max-age=0\s*$/i.test(a));
    if (expired || value === '') jar.delete(name);
    else jar.set(name, value);
  }
}

/** What a browser does from the authorization URL: follow redirects, post the login form once, stop at a redirect URI. */
async function drive(issuer: string, redirectUris: string[], start: string, form: URLSearchParams): Promise<URL> {
  const jar = new Map<string, string>();
  const isRedirectUri = (url: URL) => redirectUris.some((uri) => { const r = new URL(uri); return r.origin === url.origin && r.pathname === url.pathname; });
  let url = new URL(start);
  let body: string | undefined;
  for (let hop = 0; hop < 15; hop++) {
    if (isRedirectUri(url)) return url;
    if (url.origin !== new URL(issuer).origin) throw new Error(`signIn: ${url.origin} is neither the provider nor a redirect URI`);
    const response = await fetch(url, {
      method: body === undefined ? 'GET' : 'POST',
      body,
      redirect: 'manual',
      headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '), ...(body === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }) },
      signal: AbortSignal.timeout(10_000),
    });
    storeCookies(jar, response);
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      await response.body?.cancel();
      url = new URL(location, url);
      body = undefined;
      continue;
    }
    const text = await response.text();
    if (response.status === 200 && body === undefined && /^\/interaction\/[^/]+$/.test(url.pathname)) {
      body = form.toString();
      continue;
    }
    const said = text.replace(/<style[\s\S]*?<\/style>/g, '').replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 300);
    throw new Error(`signIn: the provider answered ${response.status} at ${url.pathname}: ${said}`);
  }
  throw new Error('signIn: too many redirects');
}

export async function startOidcProvider(options: OidcProviderOptions): Promise<OidcTestProvider> {
  const server = http.createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(options.port ?? 0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  const issuer = `http://127.0.0.1:${port}`;
  const provider = new Provider(issuer, configuration(options));
  const callback = provider.callback();
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (!/^\/interaction\/[^/?]+(\?|$)/.test(req.url ?? '')) return void callback(req, res);
    interaction(provider, options, req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(400, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(`interaction failed: ${error instanceof Error ? error.message : String(error)}`);
    });
  });
  return {
    issuer,
    port,
    provider,
    signIn: (authorizationUrl, login) => drive(issuer, options.redirectUris, authorizationUrl, new URLSearchParams({ login })),
    cancel: (authorizationUrl) => drive(issuer, options.redirectUris, authorizationUrl, new URLSearchParams({ cancel: '1' })),
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
