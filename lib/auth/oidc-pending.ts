// What an OIDC sign-in keeps between sending the browser to the provider and its return:
// the state, the nonce and the PKCE code verifier that only this browser may bring back,
// and the page to return to. The caller keeps it in a short-lived HttpOnly cookie; this
// file only writes and reads the cookie's value (base64url JSON), and refuses what it
// did not write, what is older than PENDING_MAX_AGE_MS, and a page of another site.
import { safeReturnPath } from './return-to';
import { systemClock } from '../time/clock';

export type OidcPending = { state: string; nonce: string; codeVerifier: string; returnTo: string; createdAt: number };

/** How long a sign-in may take between the redirect to the provider and the callback: the cookie's Max-Age too. */
export const PENDING_MAX_AGE_MS = 10 * 60 * 1000;
/** A pending sign-in written this far in the future (another process's clock) is still taken. */
const FUTURE_SKEW_MS = 60 * 1000;
/** A cookie value longer than this is not one this file wrote. */
const MAX_ENCODED_LENGTH = 4096;
/** state, nonce and the code verifier as openid-client makes them (base64url), or as RFC 7636 allows the verifier. */
const RANDOM_VALUE = /^[A-Za-z0-9._~-]{16,256}$/;

/** Whether `returnTo` is a path of this server: starts with "/", not "//" or "/\", no control characters. */
export function isSafeReturnTo(returnTo: unknown): returnTo is string {
  return typeof returnTo === 'string' && returnTo.length > 0 && safeReturnPath(returnTo) === returnTo;
}

export function encodePending(p: OidcPending): string {
  const { state, nonce, codeVerifier, returnTo, createdAt } = p;
  return Buffer.from(JSON.stringify({ state, nonce, codeVerifier, returnTo, createdAt }), 'utf8').toString('base64url');
}

/** The pending sign-in in a cookie value, or null when it is malformed, unsafe or older than PENDING_MAX_AGE_MS. */
export function decodePending(text: string, now: number = systemClock.wall()): OidcPending | null {
  if (typeof text !== 'string' || text.length === 0 || text.length > MAX_ENCODED_LENGTH || !/^[A-Za-z0-9_-]+$/.test(text)) return null;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const { state, nonce, codeVerifier, returnTo, createdAt } = value as Record<string, unknown>;
  if (![state, nonce, codeVerifier].every((v) => typeof v === 'string' && RANDOM_VALUE.test(v))) return null;
  if (!isSafeReturnTo(returnTo)) return null;
  if (typeof createdAt !== 'number' || !Number.isFinite(createdAt)) return null;
  if (now - createdAt > PENDING_MAX_AGE_MS || createdAt - now > FUTURE_SKEW_MS) return null;
  return { state: state as string, nonce: nonce as string, codeVerifier: codeVerifier as string, returnTo, createdAt };
}
