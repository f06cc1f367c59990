// Runs before routing, on every path (Next 16's proxy runs in the Node.js runtime, in the
// server's own process: it reads the config and the environment as the routes do).
// - Host: only the names this server is reached by (LEASEHOLD_ALLOWED_HOSTS; lib/api/host.ts),
//   so that a page on another site cannot read it through DNS rebinding: 421. The health
//   checks (GET /api/health, /api/health/live) answer whatever the Host.
// - Methods: a path of the API or /metrics answers its methods only: 405 with Allow.
// - Origin: a state-changing request (POST, PUT, PATCH, DELETE, ...) from a browser must come
//   from this server's own pages: 403.
// - Malformed percent-escapes: Next answers a path holding one with a bare 500 while decoding
//   route parameters; a 400 here instead (the API's JSON error under /api).
// - Security headers (lib/api/security-headers.ts): a page gets a Content-Security-Policy
//   with a nonce made for this request, handed to the page on the request (Next puts it on its
//   own scripts; app/layout.tsx on the theme script); every answer, refusals included, gets
//   the rest.
// - /leases: a lease page reads its id from the raw path (LEASE_PATH_HEADER) and decodes it
//   exactly once itself. Next 16 hands a page's catch-all segments over undecoded, and its
//   generateMetadata decoded: a key holding "%" or "/" must mean the same thing everywhere.
//
// Not here: a request that carries a body (Content-Length or Transfer-Encoding) to a route
// that reads one (POST /api/v1/demo). Next reads the whole body of every request the proxy
// sees before it answers (to hand it on), up to 10 MB, however large it says it is: such a
// route checks Host, Origin, Content-Type and size itself, stopping at its limit
// (lib/api/body.ts). A new route that takes a body is added to both matchers below.
import { NextResponse, type NextRequest } from 'next/server';
import { currentHostRule } from './lib/api/guard';
import { checkHost, checkOrigin } from './lib/api/host';
import { allowedMethods, methodNotAllowed, refusalResponse, RequestRefusedError } from './lib/api/refusal';
import { LEASE_PATH_HEADER } from './lib/domain/lease-id';
import { isPagePath, newNonce, NONCE_HEADER, securityHeaders } from './lib/api/security-headers';

export function proxy(request: NextRequest) {
  const raw = new URL(request.url).pathname;
  const nonce = isPagePath(raw) ? newNonce() : null;
  const headers = securityHeaders(nonce);
  const response = answer(request, raw, nonce, headers);
  for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
  return response;
}

function answer(request: NextRequest, raw: string, nonce: string | null, security: Record<string, string>): Response {
  const method = request.method.toUpperCase();
  try {
    checkHost(currentHostRule(), request.headers, raw, method);
    const allowed = allowedMethods(raw);
    if (allowed && !allowed.includes(method)) throw methodNotAllowed(method, allowed);
    checkOrigin(request.headers, method);
  } catch (error) {
    if (error instanceof RequestRefusedError) return refusalResponse(error);
    throw error;
  }
  try {
    decodeURIComponent(raw);
  } catch {
    const message = 'The request path holds a malformed percent-escape (such as "%E0%A4%A"): encode lease ids with encodeURIComponent.';
    if (allowedMethods(raw)) return refusalResponse(new RequestRefusedError(400, 'invalid_path', message));
    return new Response(`400 Bad Request: ${message}\n`, { status: 400, headers: { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' } });
  }
  // The API and built assets go on as they came; only a page's request is given headers.
  if (!nonce) return NextResponse.next();
  const headers = new Headers(request.headers);
  if (raw.startsWith('/leases/')) headers.set(LEASE_PATH_HEADER, raw);
  // Next reads the nonce of its scripts from the policy on the request.
  headers.set(NONCE_HEADER, nonce);
  headers.set('Content-Security-Policy', security['Content-Security-Policy']!);
  return NextResponse.next({ request: { headers } });
}

// The paths of lib/api/refusal.ts BODY_ROUTES (Next reads the matcher as written: literals only).
export const config = {
  matcher: [
    // Every path but the routes that read a body...
    '/((?!api/v1/(?:demo|demo/inbox|auth/login|auth/logout|users|tokens|users/[^/]+|tokens/[^/]+|webhooks|alert-rules|silences|webhooks/[^/]+|webhooks/[^/]+/test|webhooks/[^/]+/replay|alert-rules/[^/]+|silences/[^/]+|telemetry)/?$)(?!api/v1/leases/.+/force-(?:expire|release)/?$).*)',
    // ...and those too when the request carries no body.
    { source: '/api/v1/demo', missing: [{ type: 'header', key: 'content-length' }, { type: 'header', key: 'transfer-encoding' }] },
    { source: '/api/v1/demo/inbox', missing: [{ type: 'header', key: 'content-length' }, { type: 'header', key: 'transfer-encoding' }] },
    { source: '/api/v1/auth/:action(login|logout)', missing: [{ type: 'header', key: 'content-length' }, { type: 'header', key: 'transfer-encoding' }] },
    { source: '/api/v1/:kind(users|tokens)', missing: [{ type: 'header', key: 'content-length' }, { type: 'header', key: 'transfer-encoding' }] },
    { source: '/api/v1/:kind(users|tokens)/:id', missing: [{ type: 'header', key: 'content-length' }, { type: 'header', key: 'transfer-encoding' }] },
    { source: '/api/v1/:kind(webhooks|alert-rules|silences)', missing: [{ type: 'header', key: 'content-length' }, { type: 'header', key: 'transfer-encoding' }] },
    { source: '/api/v1/:kind(webhooks|alert-rules|silences)/:id', missing: [{ type: 'header', key: 'content-length' }, { type: 'header', key: 'transfer-encoding' }] },
    { source: '/api/v1/webhooks/:id/:action(test|replay)', missing: [{ type: 'header', key: 'content-length' }, { type: 'header', key: 'transfer-encoding' }] },
    { source: '/api/v1/telemetry', missing: [{ type: 'header', key: 'content-length' }, { type: 'header', key: 'transfer-encoding' }] },
    { source: '/api/v1/leases/:path+', missing: [{ type: 'header', key: 'content-length' }, { type: 'header', key: 'transfer-encoding' }] },
  ],
};
