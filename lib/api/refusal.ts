// A request refused before it reaches a route's work: wrong Host, cross-origin, wrong method,
// wrong content type, a body too large. Its answer has the API's error shape,
// `{ error, message }`. Kept apart from lib/errors.ts so that proxy.ts, which uses it, does
// not load the store's modules.

import { CONTROL_CHARACTERS } from '../domain/unprintable';

export class RequestRefusedError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'RequestRefusedError';
  }
}

export function refusalResponse(refusal: RequestRefusedError): Response {
  return Response.json({ error: refusal.code, message: refusal.message }, { status: refusal.status, headers: { 'Cache-Control': 'no-store', ...refusal.headers } });
}

const QUOTE_OR_BACKSLASH = /["\\]/g;

/** A value from a request as a message quotes it: at most 60 characters, `"` and `\` escaped with a backslash, control characters as \xNN. */
export function quoted(value: string): string {
  const cut = value.length > 60 ? `${value.slice(0, 57)}...` : value;
  // Quotes and backslashes first: the backslash of a \xNN made next is not doubled.
  const escaped = cut.replace(QUOTE_OR_BACKSLASH, '\\$&').replace(CONTROL_CHARACTERS, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
  return `"${escaped}"`;
}

/**
 * The routes that take a body, and the methods they answer. proxy.ts does not see a request
 * that carries a body to one of them (its matcher lists the same paths): the route checks
 * Host, Origin, type and size itself (lib/api/body.ts). A lease path ending in
 * /force-expire or /force-release answers GET too: a lease whose key ends so.
 */
export const BODY_ROUTES: readonly { path: RegExp; methods: string[] }[] = [
  { path: /^\/api\/v1\/demo(?:\/inbox)?$/, methods: ['GET', 'HEAD', 'OPTIONS', 'POST'] },
  { path: /^\/api\/v1\/auth\/(?:login|logout)$/, methods: ['OPTIONS', 'POST'] },
  { path: /^\/api\/v1\/(?:users|tokens)$/, methods: ['GET', 'HEAD', 'OPTIONS', 'POST'] },
  { path: /^\/api\/v1\/users\/[^/]+$/, methods: ['OPTIONS', 'PATCH'] },
  { path: /^\/api\/v1\/tokens\/[^/]+$/, methods: ['OPTIONS', 'DELETE'] },
  { path: /^\/api\/v1\/leases\/.+\/force-(?:expire|release)$/, methods: ['GET', 'HEAD', 'OPTIONS', 'POST'] },
  { path: /^\/api\/v1\/(?:webhooks|alert-rules|silences)$/, methods: ['GET', 'HEAD', 'OPTIONS', 'POST'] },
  { path: /^\/api\/v1\/webhooks\/[^/]+$/, methods: ['GET', 'HEAD', 'OPTIONS', 'PATCH', 'DELETE'] },
  { path: /^\/api\/v1\/webhooks\/[^/]+\/(?:test|replay)$/, methods: ['OPTIONS', 'POST'] },
  { path: /^\/api\/v1\/alert-rules\/[^/]+$/, methods: ['OPTIONS', 'PATCH', 'DELETE'] },
  { path: /^\/api\/v1\/silences\/[^/]+$/, methods: ['OPTIONS', 'DELETE'] },
  { path: /^\/api\/v1\/telemetry$/, methods: ['OPTIONS', 'POST'] },
];

/** The methods each path of the API answers. Paths outside the API and /metrics: null (Next's pages decide). */
export function allowedMethods(pathname: string): string[] | null {
  const route = BODY_ROUTES.find((candidate) => candidate.path.test(pathname));
  if (route) return route.methods;
  if (pathname === '/api' || pathname.startsWith('/api/') || pathname === '/metrics') return ['GET', 'HEAD', 'OPTIONS'];
  return null;
}

export function methodNotAllowed(method: string, allowed: string[]): RequestRefusedError {
  return new RequestRefusedError(405, 'method_not_allowed', `This path answers ${allowed.join(', ')}, not ${quoted(method)}.`, { Allow: allowed.join(', ') });
}
