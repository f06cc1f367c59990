// The three roles of people (docs/admin-actions.md): viewer reads, operator acts on fenced
// leases, admin does everything. What each may do is lib/auth/permissions.ts.
export const ROLES = ['viewer', 'operator', 'admin'] as const;
export type PersonRole = (typeof ROLES)[number];

// An API token may also have the role `reporter`: it posts holder-side timings
// (POST /api/v1/telemetry) and may do nothing else, not even read. People never have it.
export const TOKEN_ROLES = [...ROLES, 'reporter'] as const;
/** Any role a principal can act with: a person's, or a token's. */
export type Role = (typeof TOKEN_ROLES)[number];
