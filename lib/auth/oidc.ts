// Signing in with an OpenID Connect provider (authorization code flow with PKCE), through
// openid-client. beginOidcSignIn makes the provider's authorization URL and what the
// browser's callback must match (state, nonce, PKCE code verifier); the caller keeps that
// in a short-lived HttpOnly cookie (encodePending) and hands it back to
// completeOidcSignIn with the callback URL, which exchanges the code, checks the ID token
// and maps the user's groups to a role. The provider's discovery document (and with it
// its signing keys, as openid-client caches them) is fetched once per process and client
// configuration; a failed discovery is not kept, so the next sign-in tries again.
import * as client from 'openid-client';
import type { OidcConfig, PersonRole as Role } from '../config/auth-schema';
import { emailFrom, groupsFrom, nameFrom, roleForGroups } from './oidc-claims';
import { callbackError, discoveryError, OidcError, userinfoError } from './oidc-errors';
import { isSafeReturnTo, PENDING_MAX_AGE_MS, type OidcPending } from './oidc-pending';
import { systemClock } from '../time/clock';

export { roleForGroups } from './oidc-claims';
export { OidcError, type OidcFailure } from './oidc-errors';
export { decodePending, encodePending, isSafeReturnTo, PENDING_MAX_AGE_MS, type OidcPending } from './oidc-pending';

export type OidcIdentity = { issuer: string; subject: string; name: string; email: string | null; groups: string[]; role: Role | null };

/** Seconds one request to the provider may take (discovery, token, userinfo, its keys). */
const REQUEST_TIMEOUT_SECONDS = 10;

const discovered = new Map<string, Promise<client.Configuration>>();

function hostOf(config: OidcConfig): string {
  try {
    return new URL(config.issuer).host;
  } catch {
    return config.issuer.slice(0, 100);
  }
}

/** Client authentication: none for a public client; a secret in Basic (the OIDC default), or in the body when the provider takes only that. */
function clientAuth(config: OidcConfig, server: client.ServerMetadata): client.ClientAuth {
  if (config.clientSecret === undefined) return client.None();
  const methods = server.token_endpoint_auth_methods_supported;
  if (methods && !methods.includes('client_secret_basic') && methods.includes('client_secret_post')) return client.ClientSecretPost(config.clientSecret);
  return client.ClientSecretBasic(config.clientSecret);
}

async function discover(config: OidcConfig): Promise<client.Configuration> {
  const host = hostOf(config);
  const insecure = config.allowInsecureIssuer ? [client.allowInsecureRequests] : [];
  const metadata: Partial<client.ClientMetadata> =
    config.clientSecret === undefined ? { token_endpoint_auth_method: 'none' } : { client_secret: config.clientSecret };
  let found: client.Configuration;
  try {
    found = await client.discovery(new URL(config.issuer), config.clientId, metadata, undefined, { execute: insecure, timeout: REQUEST_TIMEOUT_SECONDS });
  } catch (error) {
    throw discoveryError(host, error);
  }
  const server = found.serverMetadata();
  if (!server.authorization_endpoint || !server.token_endpoint) {
    throw new OidcError('discovery', `The sign-in provider ${host} has no authorization or token endpoint in its discovery document.`);
  }
  // The same metadata, with the client authentication the provider takes.
  const configuration = new client.Configuration(server, config.clientId, metadata, clientAuth(config, server));
  configuration.timeout = REQUEST_TIMEOUT_SECONDS;
  for (const extension of insecure) extension(configuration);
  return configuration;
}

/** The provider's configuration for this client, discovered once per process; a failure is forgotten so that the next call tries again. */
function configurationFor(config: OidcConfig): Promise<client.Configuration> {
  const key = JSON.stringify([config.issuer, config.clientId, config.clientSecret ?? null, config.allowInsecureIssuer]);
  let pending = discovered.get(key);
  if (!pending) {
    pending = discover(config);
    discovered.set(key, pending);
    const mine = pending;
    mine.catch(() => {
      if (discovered.get(key) === mine) discovered.delete(key);
    });
  }
  return pending;
}

/** Forgets every discovered provider (tests; a configuration reload). */
export function forgetOidcDiscovery(): void {
  discovered.clear();
}

function scopeOf(config: OidcConfig): string {
  const scopes = config.scopes.filter((scope) => scope.length > 0);
  return (scopes.includes('openid') ? scopes : ['openid', ...scopes]).join(' ');
}

/** The provider's authorization URL to send the browser to, and what must be kept (in a short-lived HttpOnly cookie, by the caller) until the callback. */
export async function beginOidcSignIn(config: OidcConfig, returnTo: string): Promise<{ url: string; pending: OidcPending }> {
  if (!isSafeReturnTo(returnTo)) {
    throw new OidcError('return_to', 'The page to return to after signing in must be a page of this server.');
  }
  const configuration = await configurationFor(config);
  const pending: OidcPending = {
    state: client.randomState(),
    nonce: client.randomNonce(),
    codeVerifier: client.randomPKCECodeVerifier(),
    returnTo,
    createdAt: systemClock.wall(),
  };
  const url = client.buildAuthorizationUrl(configuration, {
    redirect_uri: config.redirectUri,
    response_type: 'code',
    scope: scopeOf(config),
    code_challenge: await client.calculatePKCECodeChallenge(pending.codeVerifier),
    code_challenge_method: 'S256',
    state: pending.state,
    nonce: pending.nonce,
  });
  return { url: url.href, pending };
}

/**
 * The callback as the token request must name it: the configured redirect URI with the
 * callback's parameters. The URL this server saw may differ (a proxy in front, another
 * host name); the provider compares redirect_uri with the one in the authorization request.
 */
function callbackAt(config: OidcConfig, callbackUrl: URL): URL {
  const current = new URL(config.redirectUri);
  current.search = callbackUrl.search;
  current.hash = '';
  return current;
}

/** Equal strings, compared in time that does not depend on where they differ. */
function sameText(a: string, b: string): boolean {
  let difference = a.length ^ b.length;
  for (let i = 0; i < Math.max(a.length, b.length); i++) difference |= (a.charCodeAt(i) || 0) ^ (b.charCodeAt(i) || 0);
  return difference === 0;
}

/** The ID token's claims, with those it lacks (groups, the user name) read from userinfo. */
async function claimsOf(config: OidcConfig, configuration: client.Configuration, accessToken: string, idClaims: client.IDToken): Promise<Record<string, unknown>> {
  const needed = [config.groupsClaim, config.usernameClaim].some((claim) => idClaims[claim] === undefined);
  if (!needed || !configuration.serverMetadata().userinfo_endpoint) return idClaims;
  try {
    const userinfo = await client.fetchUserInfo(configuration, accessToken, idClaims.sub);
    return { ...userinfo, ...idClaims };
  } catch (error) {
    throw userinfoError(hostOf(config), error);
  }
}

/** Exchanges the callback's code (PKCE, state and nonce checked), validates the ID token, reads the groups (ID token, else userinfo), maps them to a role. */
export async function completeOidcSignIn(config: OidcConfig, callbackUrl: URL, pending: OidcPending): Promise<OidcIdentity> {
  const host = hostOf(config);
  const state = callbackUrl.searchParams.get('state');
  if (state === null || !pending?.state || !sameText(state, pending.state)) {
    throw new OidcError('state', 'This sign-in answer does not belong to the sign-in this browser started (it is old, or from another tab): start again.');
  }
  if (!(systemClock.wall() - pending.createdAt <= PENDING_MAX_AGE_MS)) {
    throw new OidcError('expired', 'This sign-in took too long: start again.');
  }
  const configuration = await configurationFor(config);
  let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
  try {
    tokens = await client.authorizationCodeGrant(configuration, callbackAt(config, callbackUrl), {
      pkceCodeVerifier: pending.codeVerifier,
      expectedState: pending.state,
      expectedNonce: pending.nonce,
      idTokenExpected: true,
    });
  } catch (error) {
    throw callbackError(host, error);
  }
  const idClaims = tokens.claims();
  if (!idClaims) throw new OidcError('id_token', `The sign-in provider ${host} sent no ID token.`);
  const claims = await claimsOf(config, configuration, tokens.access_token, idClaims);
  const groups = groupsFrom(claims[config.groupsClaim]);
  return {
    issuer: idClaims.iss,
    subject: idClaims.sub,
    name: nameFrom(config, claims, idClaims.sub),
    email: emailFrom(claims),
    groups,
    role: roleForGroups(config, groups),
  };
}
