// What each role may do: the one table (docs/admin-actions.md). Every page, route handler and
// stream asks `can(role, permission)` through lib/auth/guard.ts; tests/integration/
// tests/e2e/role-matrix.spec.ts checks every route of the app against lib/auth/route-rules.ts.
import type { PersonRole, Role } from '../config/auth-schema';

export type { PersonRole, Role };

export const PERMISSIONS = {
  /** Leases, events, failovers, sources, the live stream, /metrics. */
  read: 'see leases, events, failovers, sources and metrics',
  /** The audit log. */
  'audit:read': 'read the audit log',
  /** Force-expire or force-release a fenced lease (its token is bumped). */
  'lease:force': 'force-expire or force-release a fenced lease',
  /** Force-release an unfenced lease, whose old holder may still act. */
  'lease:force-unfenced': 'force-release an unfenced lease',
  /** Turn the embedded demo's faults on and off. */
  'demo:control': 'turn the demo fleet\'s faults on and off',
  /** Users and API tokens. */
  'users:manage': 'manage users and API tokens',
  /** Webhook endpoints, alert rules and silences. */
  'alerts:manage': 'manage alert rules, silences and webhook endpoints',
  /** Post holder-side timings and claims (POST /api/v1/telemetry). */
  'telemetry:report': 'report holder-side renewal timings',
} as const;

export type Permission = keyof typeof PERMISSIONS;

export const ROLE_PERMISSIONS: Record<Role, readonly Permission[]> = {
  viewer: ['read'],
  operator: ['read', 'audit:read', 'lease:force', 'demo:control'],
  admin: ['read', 'audit:read', 'lease:force', 'lease:force-unfenced', 'demo:control', 'users:manage', 'alerts:manage'],
  // A token for holders that report their timings: nothing else, not even reading.
  reporter: ['telemetry:report'],
};

/** People's roles, lowest first. */
export const ROLE_ORDER: readonly PersonRole[] = ['viewer', 'operator', 'admin'];

export function can(role: Role | null, permission: Permission): boolean {
  return role !== null && ROLE_PERMISSIONS[role].includes(permission);
}

/**
 * A user's token acts with at most its user's role: the lower of the two. A reporter token
 * stays a reporter whatever its user: it reads and changes nothing, and only posts telemetry.
 */
export function lowerRole(token: Role, user: PersonRole): Role {
  if (token === 'reporter') return token;
  return ROLE_ORDER.indexOf(token) <= ROLE_ORDER.indexOf(user) ? token : user;
}

/** One of people's roles (viewer, operator, admin). */
export function isRole(value: unknown): value is PersonRole {
  return typeof value === 'string' && (ROLE_ORDER as readonly string[]).includes(value);
}

/** Any role a token may have: people's, or reporter. */
export function isTokenRole(value: unknown): value is Role {
  return isRole(value) || value === 'reporter';
}
