// The two steps of an OIDC sign-in as route handlers answer them: to the provider with a
// pending-state cookie, and back, to a session (lib/auth/session.ts) and the page the person
// was going to. A failure goes back to the sign-in page with a sentence, never a stack.
import { clientAddress } from '../api/peer';
import { getConfig } from '../root';
import type { Store } from '../db/store';
import { upsertOidcUser } from '../db/users';
import { logger } from '../log';
import { isHttps, sessionCookie } from './cookies';
import { beginOidcSignIn, completeOidcSignIn, decodePending, encodePending, OidcError, PENDING_MAX_AGE_MS } from './oidc';
import { safeReturnPath } from './return-to';
import type { SignInErrorCode } from './sign-in-errors';
import { startSession } from './session';

const PENDING_COOKIE = 'leasehold_oidc';
const PENDING_PATH = '/api/v1/auth/oidc';

const pendingCookie = (value: string, https: boolean, maxAge: number) =>
  `${PENDING_COOKIE}=${value}; Path=${PENDING_PATH}; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${https ? '; Secure' : ''}`;

function toLogin(request: Request, code: SignInErrorCode): Response {
  const headers = new Headers({ Location: `/login?error=${code}`, 'Cache-Control': 'no-store' });
  headers.append('Set-Cookie', pendingCookie('', isHttps(request), 0));
  return new Response(null, { status: 303, headers });
}

function oidcConfig() {
  const oidc = getConfig().auth.oidc;
  if (!oidc) throw new OidcError('config', 'Single sign-on is not set up on this server (auth.oidc in the config file).');
  return oidc;
}

export async function oidcLogin(request: Request): Promise<Response> {
  try {
    const next = safeReturnPath(new URL(request.url).searchParams.get('next'));
    const { url, pending } = await beginOidcSignIn(oidcConfig(), next);
    const headers = new Headers({ Location: url, 'Cache-Control': 'no-store' });
    headers.append('Set-Cookie', pendingCookie(encodePending(pending), isHttps(request), Math.floor(PENDING_MAX_AGE_MS / 1000)));
    return new Response(null, { status: 303, headers });
  } catch (error) {
    return toLogin(request, failure(error));
  }
}

export async function oidcCallback(request: Request, store: Store): Promise<Response> {
  try {
    const raw = request.headers.get('cookie')?.split(';').map((part) => part.trim()).find((part) => part.startsWith(`${PENDING_COOKIE}=`));
    const pending = raw ? decodePending(raw.slice(PENDING_COOKIE.length + 1)) : null;
    if (!pending) return toLogin(request, 'sso_expired');
    const config = oidcConfig();
    const identity = await completeOidcSignIn(config, new URL(request.url), pending);
    if (identity.role === null) {
      logger('auth').warn({ user: identity.name, issuer: identity.issuer, groups: identity.groups.slice(0, 20) }, 'OIDC sign-in refused: no group maps to a role');
      return toLogin(request, 'sso_no_role');
    }
    const user = await upsertOidcUser(store, { issuer: identity.issuer, subject: identity.subject, name: identity.name, role: identity.role });
    if (user.disabledAt !== null) return toLogin(request, 'sso_disabled');
    const session = await startSession(store, getConfig().auth, user, 'oidc', clientAddress(request.headers));
    logger('auth').info({ user: user.name, role: user.role, issuer: identity.issuer }, 'signed in with OIDC');
    const headers = new Headers({ Location: safeReturnPath(pending.returnTo), 'Cache-Control': 'no-store' });
    headers.append('Set-Cookie', sessionCookie(session.cookieValue, isHttps(request), session.maxAgeSeconds));
    headers.append('Set-Cookie', pendingCookie('', isHttps(request), 0));
    return new Response(null, { status: 303, headers });
  } catch (error) {
    return toLogin(request, failure(error));
  }
}

function failure(error: unknown): SignInErrorCode {
  if (error instanceof OidcError) {
    // A sign-in link followed where no provider is configured is nothing to warn about.
    const level = error.reason === 'config' && !getConfig().auth.oidc ? 'debug' : 'warn';
    logger('auth')[level]({ reason: error.reason, detail: error.detail }, `OIDC sign-in failed: ${error.message}`);
    if (error.reason === 'unreachable') return 'sso_unreachable';
    if (error.reason === 'refused') return 'sso_refused';
    if (error.reason === 'expired' || error.reason === 'state') return 'sso_expired';
    if (error.message.startsWith('Single sign-on is not set up')) return 'sso_not_configured';
    return 'sso_failed';
  }
  logger('auth').error({ error: (error as Error)?.message }, 'OIDC sign-in failed');
  return 'sso_failed';
}
