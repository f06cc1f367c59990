// The server side of every rule in route-rules.ts: a route handler calls requireAccess first,
// a page calls pageAccess (lib/auth/page.ts). The principal comes from lib/auth/principal.ts.
import { getConfig } from '../root';
import { getStore } from '../root';
import { AuthError } from './errors';
import { can, PERMISSIONS, ROLE_PERMISSIONS, type Permission, type Role } from './permissions';
import { authenticate, type Principal } from './principal';
import { ROUTE_RULES, type RouteKey } from './route-rules';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function unauthenticated(): AuthError {
  return new AuthError(401, 'unauthenticated', 'Sign in first, or send an API token as "Authorization: Bearer lh_..." (leasehold tokens create).', {
    'WWW-Authenticate': 'Bearer realm="leasehold"',
  });
}

export function forbidden(principal: Principal, permission: Permission): AuthError {
  const roles = (Object.keys(ROLE_PERMISSIONS) as Role[]).filter((role) => ROLE_PERMISSIONS[role].includes(permission));
  return new AuthError(403, 'forbidden', `${principal.name} (${principal.role}) may not ${PERMISSIONS[permission]}: that needs the role ${roles.join(' or ')}.`);
}

/**
 * A browser sends cookies with requests other sites make it send: a state-changing request
 * signed in by cookie must say it comes from this server's pages (Origin, or Sec-Fetch-Site:
 * same-origin; lib/api/host.ts checkOrigin already refused a foreign one). A bearer token is
 * never sent by a browser on its own, so such requests are exempt.
 */
function checkCookieRequestOrigin(principal: Principal, headers: Headers, method: string) {
  if (SAFE_METHODS.has(method) || (principal.method !== 'password' && principal.method !== 'oidc')) return;
  if (headers.get('origin') !== null || headers.get('sec-fetch-site') === 'same-origin') return;
  throw new AuthError(403, 'cross_origin', `A ${method} signed in by cookie must come from this server's own pages (with an Origin header); scripts send an API token instead.`);
}

/** `onForbidden`: called with a signed-in principal the rule refuses, before the 403 (an admin action audits it). */
export type AccessOptions = { onForbidden?: (principal: Principal, error: AuthError) => Promise<void> };

/** For a route handler: the principal allowed by the route's rule (null for a public route), or AuthError. */
export async function requireAccess(request: Request, route: RouteKey, options: AccessOptions = {}): Promise<Principal | null> {
  const rule = ROUTE_RULES[route];
  if (rule === 'public') return null;
  const method = request.method.toUpperCase();
  const principal = await authenticate(getStore, getConfig(), request.headers);
  if (principal === null) throw unauthenticated();
  checkCookieRequestOrigin(principal, request.headers, method);
  if (!can(principal.role, rule)) {
    const error = forbidden(principal, rule);
    await options.onForbidden?.(principal, error);
    throw error;
  }
  return principal;
}
