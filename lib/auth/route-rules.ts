// Who may call what: every route handler and page of app/, by method and path as the app
// folder names it (route groups left out), with the permission it needs or "public".
// tests/e2e/role-matrix.spec.ts lists the app's routes from its files: a route or
// method missing here fails it, and it calls each one as every kind of caller.
import type { Permission } from './permissions';

export type Rule = Permission | 'public';

export const ROUTE_RULES = {
  // Health checks say nothing sensitive: load balancers and orchestrators call them unauthenticated.
  'GET /api/health': 'public',
  'GET /api/health/live': 'public',
  // Any other /api/ path: the same 404 to everybody.
  'GET /api/[...missing]': 'public',
  // Signing in and out, and who am I.
  'POST /api/v1/auth/login': 'public',
  'POST /api/v1/auth/logout': 'public',
  'GET /api/v1/auth/me': 'public',
  'GET /api/v1/auth/oidc/login': 'public',
  'GET /api/v1/auth/oidc/callback': 'public',
  // Reading.
  'GET /api/v1/leases': 'read',
  'GET /api/v1/leases/[...path]': 'read',
  'GET /api/v1/failovers': 'read',
  'GET /api/v1/failovers.csv': 'read',
  'GET /api/v1/sources': 'read',
  'GET /api/v1/stream': 'read',
  'GET /api/v1/demo': 'read',
  'GET /api/v1/demo/inbox': 'read',
  // The demo's webhook receiver: public as any receiver is; it keeps only what its signature proves.
  'POST /api/v1/demo/inbox': 'public',
  'GET /metrics': 'read',
  // Holders' own timings and claims (lib/lease's reporter): reporter tokens, and only that.
  'POST /api/v1/telemetry': 'telemetry:report',
  // Acting. Force on an unfenced lease needs lease:force-unfenced on top (lib/admin).
  'POST /api/v1/leases/[...path]': 'lease:force',
  'POST /api/v1/demo': 'demo:control',
  'GET /api/v1/audit': 'audit:read',
  'GET /api/v1/audit.csv': 'audit:read',
  // Users and tokens.
  'GET /api/v1/users': 'users:manage',
  'POST /api/v1/users': 'users:manage',
  'PATCH /api/v1/users/[id]': 'users:manage',
  'GET /api/v1/tokens': 'users:manage',
  'POST /api/v1/tokens': 'users:manage',
  'DELETE /api/v1/tokens/[id]': 'users:manage',
  // Alerts: what fires and the rules and silences are for every reader; changing them, and
  // the endpoints (their URLs may carry credentials), for admins.
  'GET /api/v1/alerts': 'read',
  'GET /api/v1/alert-rules': 'read',
  'POST /api/v1/alert-rules': 'alerts:manage',
  'PATCH /api/v1/alert-rules/[id]': 'alerts:manage',
  'DELETE /api/v1/alert-rules/[id]': 'alerts:manage',
  'GET /api/v1/silences': 'read',
  'POST /api/v1/silences': 'alerts:manage',
  'DELETE /api/v1/silences/[id]': 'alerts:manage',
  'GET /api/v1/webhooks': 'alerts:manage',
  'POST /api/v1/webhooks': 'alerts:manage',
  'GET /api/v1/webhooks/[id]': 'alerts:manage',
  'PATCH /api/v1/webhooks/[id]': 'alerts:manage',
  'DELETE /api/v1/webhooks/[id]': 'alerts:manage',
  'POST /api/v1/webhooks/[id]/test': 'alerts:manage',
  'POST /api/v1/webhooks/[id]/replay': 'alerts:manage',
  // Pages.
  'PAGE /login': 'public',
  'PAGE /': 'read',
  'PAGE /leases/[...id]': 'read',
  'PAGE /failovers': 'read',
  'PAGE /sources': 'read',
  'PAGE /alerts': 'read',
  'PAGE /digest': 'read',
  'PAGE /demo/inbox': 'read',
  'PAGE /audit': 'audit:read',
  'PAGE /settings': 'users:manage',
} as const satisfies Record<string, Rule>;

export type RouteKey = keyof typeof ROUTE_RULES;
export type PageKey = Extract<RouteKey, `PAGE ${string}`>;
