// The three roles (docs/admin-actions.md): viewer reads, operator acts on fenced leases, admin
// does everything. What each may do is lib/auth/permissions.ts.
export const ROLES = ['viewer', 'operator', 'admin'] as const;
export type Role = (typeof ROLES)[number];
