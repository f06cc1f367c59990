// The security headers of every answer (set in proxy.ts for what it sees, and in
// next.config.js's headers() for everything, so the routes that read a body have them too).
//
// - Pages: a Content-Security-Policy with a nonce made per request. Scripts run only when they
//   carry it (Next puts it on its own scripts when it finds the policy on the request; the
//   root layout puts it on the theme script), and the scripts those load ('strict-dynamic'):
//   markup an attacker gets into a page cannot run a script. Styles may be inline (React's
//   style attributes and the charts need it); nothing else loads from another origin.
// - Everything: no framing by another site, no MIME sniffing, no referrer sent to other sites.
//   (`same-origin`, not `no-referrer`: with no-referrer a browser sends `Origin: null` on the
//   console's own POSTs, which the Origin check refuses.)
// - The API and /metrics: a policy that allows nothing, should an answer ever be rendered.

/** The request header the nonce is handed to the pages in (read by app/layout.tsx). */
export const NONCE_HEADER = 'x-nonce';

/** A fresh nonce: 16 random bytes, base64. */
export function newNonce(): string {
  return btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16))));
}

/** The policy of a page served with `nonce`; `dev` adds what `next dev` needs (eval, for its fast refresh). */
export function pagePolicy(nonce: string, dev = process.env.NODE_ENV === 'development'): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${dev ? " 'unsafe-eval'" : ''}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The policy of an API answer, /metrics and the like: nothing runs, nothing frames it. */
export const API_POLICY = "default-src 'none'; frame-ancestors 'none'";

/** Headers every answer carries. */
export const COMMON_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'same-origin',
};

/**
 * Whether `path` may be a page (and gets a nonce), rather than the API, /metrics or a built
 * asset. (Not judged by a file extension: a lease key may end in ".v2".)
 */
export function isPagePath(path: string): boolean {
  return !/^\/(?:api|metrics|_next)(?:\/|$)/.test(path);
}

/** The security headers of an answer: a page's policy with `nonce`, or (null) the API's. */
export function securityHeaders(nonce: string | null): Record<string, string> {
  return { ...COMMON_SECURITY_HEADERS, 'Content-Security-Policy': nonce ? pagePolicy(nonce) : API_POLICY };
}
