// Why an OIDC sign-in failed, in words a person may read. openid-client's errors carry the
// provider's responses and the library's internals as causes; none of that goes into
// OidcError's message, which names the provider's host and, at most, the OAuth error code
// the provider sent (access_denied, invalid_grant). `detail` is for the server's log.
import { AuthorizationResponseError, ClientError, ResponseBodyError } from 'openid-client';

export type OidcFailure =
  /** The provider did not answer (refused, timed out, no such host). */
  | 'unreachable'
  /** The provider answered its discovery request with no usable document. */
  | 'discovery'
  /** The configuration cannot work (an http:// issuer without allowInsecureIssuer). */
  | 'config'
  /** The page to return to is not a path of this server. */
  | 'return_to'
  /** The callback's state is not this browser's: another sign-in, a forged or a stale link. */
  | 'state'
  /** The pending sign-in is older than PENDING_MAX_AGE_MS. */
  | 'expired'
  /** The provider refused the sign-in (the user cancelled, or may not use this client). */
  | 'refused'
  /** The provider refused to exchange the code (used already, expired, wrong verifier). */
  | 'exchange'
  /** The ID token failed a check (signature, issuer, audience, nonce, time). */
  | 'id_token'
  /** The userinfo request failed. */
  | 'userinfo'
  /** Anything else about the callback. */
  | 'callback';

export class OidcError extends Error {
  constructor(
    readonly reason: OidcFailure,
    message: string,
    /** For the server's log: the underlying error's class, code and message; never shown to the user. */
    readonly detail: string = '',
  ) {
    super(message);
    this.name = 'OidcError';
  }
}

/** An OAuth error code the provider sent, when it looks like one ("invalid_grant"); else null. */
function oauthCode(value: unknown): string | null {
  return typeof value === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(value) ? value : null;
}

/** The error's class, code and message, and its cause's, for the log (no response bodies, no tokens). */
export function describe(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 3 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    parts.push(`${current.name}${typeof code === 'string' ? ` ${code}` : ''}: ${current.message.slice(0, 200)}`);
    current = current.cause;
  }
  return parts.length > 0 ? parts.join(' <- ') : String(error).slice(0, 200);
}

/** The provider could not be reached: fetch failed (connection refused, reset, no such host) or timed out. */
function isNetworkFailure(error: unknown): boolean {
  if (error instanceof ClientError) return error.code === 'OAUTH_TIMEOUT' || error.code === 'OAUTH_ABORT';
  // undici's words for a connection refused, reset or never made, and for one cut mid-answer.
  if (error instanceof TypeError) return error.message === 'fetch failed' || error.message === 'terminated';
  return error instanceof DOMException && (error.name === 'TimeoutError' || error.name === 'AbortError');
}

export function unreachable(host: string, error: unknown): OidcError {
  return new OidcError('unreachable', `The sign-in provider ${host} could not be reached. Try again later, or ask an administrator to check the OIDC issuer setting.`, describe(error));
}

/** A failure of discovery (fetching `<issuer>/.well-known/openid-configuration`). */
export function discoveryError(host: string, error: unknown): OidcError {
  if (isNetworkFailure(error)) return unreachable(host, error);
  if (error instanceof ClientError && error.code === 'OAUTH_HTTP_REQUEST_FORBIDDEN') {
    return new OidcError('config', `The sign-in provider ${host} is configured with an http:// issuer, which needs allowInsecureIssuer (for tests only).`, describe(error));
  }
  return new OidcError('discovery', `The sign-in provider ${host} sent no usable OpenID Connect discovery document.`, describe(error));
}

/** A failure of the callback: the authorization response, the code exchange or the ID token. */
export function callbackError(host: string, error: unknown): OidcError {
  if (error instanceof OidcError) return error;
  if (isNetworkFailure(error)) return unreachable(host, error);
  if (error instanceof AuthorizationResponseError) {
    const code = oauthCode(error.error);
    return new OidcError('refused', `The sign-in provider ${host} refused the sign-in${code ? ` (${code})` : ''}.`, describe(error));
  }
  if (error instanceof ResponseBodyError) {
    const code = oauthCode(error.error);
    return new OidcError('exchange', `The sign-in provider ${host} refused to complete the sign-in${code ? ` (${code})` : ''}: start again.`, describe(error));
  }
  const code = error instanceof ClientError ? error.code : undefined;
  if (code && /^OAUTH_(JWT_|KEY_SELECTION|INVALID_RESPONSE|JSON_ATTRIBUTE)/.test(code)) {
    return new OidcError('id_token', `The sign-in provider ${host} answered with an ID token or response that failed its checks: start again.`, describe(error));
  }
  return new OidcError('callback', `The sign-in with ${host} could not be completed: start again.`, describe(error));
}

export function userinfoError(host: string, error: unknown): OidcError {
  if (isNetworkFailure(error)) return unreachable(host, error);
  return new OidcError('userinfo', `The sign-in provider ${host} did not tell who you are (its userinfo request failed): start again.`, describe(error));
}
