// Who is asking: the principal of a request, from its bearer token, its session cookie, or
// the anonymous role the config allows. The same for route handlers (a Request) and pages
// (next/headers), so both decide alike.
import { isIP } from 'node:net';
import type { Config } from '../config';
import type { Role } from '../config/auth-schema';
import { clientAddress, trustedProxies } from '../api/peer';
import type { Store } from '../db/store';
import { AuthError } from './errors';
import { sessionPrincipal } from './session';
import { SESSION_COOKIES } from './cookies';
import { tokenPrincipal } from './tokens';
import { systemClock } from '../time/clock';

export type AuthMethod = 'password' | 'oidc' | 'token' | 'anonymous';

export type Principal = {
  /** The user's name, the token's name, or "anonymous". */
  name: string;
  role: Role;
  method: AuthMethod;
  userId: string | null;
  tokenId: string | null;
  /** The session's id (the hash of its cookie), for sign-out. */
  sessionId: string | null;
  address: string;
};

/** The cookies a request carries, by name (the first of each name wins, as browsers send the most specific first). */
export function cookiesOf(headers: Headers): Map<string, string> {
  const found = new Map<string, string>();
  for (const part of (headers.get('cookie') ?? '').split(';')) {
    const equals = part.indexOf('=');
    if (equals <= 0) continue;
    const name = part.slice(0, equals).trim();
    if (!found.has(name)) found.set(name, part.slice(equals + 1).trim());
  }
  return found;
}

function isLoopback(address: string): boolean {
  return (isIP(address) === 4 && address.startsWith('127.')) || address === '::1';
}

/** The role of a request that is not signed in: the config's, or viewer on the embedded demo from this machine. */
export function anonymousRole(config: Config, address: string): Role | null {
  const configured = config.auth.anonymousRole;
  if (configured === 'viewer') return 'viewer';
  if (configured !== undefined) return null; // "none" or null
  return config.demo && isLoopback(address) ? 'viewer' : null;
}

/**
 * The request's principal, or null when it is not signed in and anonymous access is off.
 * A bearer token that is not valid is refused (401), never taken as anonymous; a session
 * cookie that is not valid (ended, signed out) counts as no cookie.
 */
export async function authenticate(storeOf: Store | (() => Promise<Store>), config: Config, headers: Headers, now = new Date(systemClock.wall())): Promise<Principal | null> {
  // The store is asked only for a token or a cookie: an anonymous reader is served (with
  // what the page or route can show) while the store is down.
  // (A store given as it is is handed on as it is: never awaited, which would read its `then`.)
  const withStore = <T>(work: (store: Store) => Promise<T>): Promise<T> => (typeof storeOf === 'function' ? storeOf().then(work) : work(storeOf));
  const address = clientAddress(headers, trustedProxies(config));
  const authorization = headers.get('authorization');
  if (authorization !== null) {
    const bearer = /^Bearer +([^\s]+) *$/i.exec(authorization);
    if (!bearer) {
      throw new AuthError(401, 'invalid_token', 'The Authorization header must be "Bearer lh_<id>_<secret>", an API token (leasehold tokens create).', {
        'WWW-Authenticate': 'Bearer realm="leasehold", error="invalid_request"',
      });
    }
    return withStore((store) => tokenPrincipal(store, bearer[1]!, address, now));
  }
  const cookies = cookiesOf(headers);
  for (const name of SESSION_COOKIES) {
    const value = cookies.get(name);
    if (value === undefined) continue;
    const principal = await withStore((store) => sessionPrincipal(store, config.auth, value, address, now));
    if (principal) return principal;
  }
  const role = anonymousRole(config, address);
  return role ? { name: 'anonymous', role, method: 'anonymous', userId: null, tokenId: null, sessionId: null, address } : null;
}
