// The audit log's vocabulary (docs/admin-actions.md): what one entry says, as the API shows it.
// Every admin action writes an entry when it is requested and one with its result. The log is
// append-only (a trigger) and hash-chained: lib/db/audit-chain.ts holds the canonical form and
// the hashing, lib/db/audit.ts the table.

/** An action is `requested`, then has one result: `done`, `refused` (with a status: 403, 409, 422) or `error`. */
export const AUDIT_PHASES = ['requested', 'done', 'refused', 'error'] as const;
export type AuditPhase = (typeof AUDIT_PHASES)[number];

/** How the actor proved who they are. */
export const AUTH_METHODS = ['password', 'token', 'oidc', 'anonymous'] as const;
export type AuthMethod = (typeof AUTH_METHODS)[number];

/** A JSON value as the store gives it back (what JSON.parse makes). */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** One audit entry in the API (GET /api/v1/audit): ids and tokens are decimal strings, times ISO strings. Its schema: schemas/audit.ts. */
export type { AuditEntry as AuditEntryView } from './schemas/audit';
