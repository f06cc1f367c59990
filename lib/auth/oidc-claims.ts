// From an OIDC provider's claims to a Leasehold user: a name, an email, the groups and the
// role they give. Pure: no I/O.
import type { OidcConfig, PersonRole as Role } from '../config/auth-schema';

/** Highest first: the first role whose group list meets the user's groups wins. */
const ROLES_HIGHEST_FIRST: readonly Role[] = ['admin', 'operator', 'viewer'];
const MAX_NAME_LENGTH = 200;

/** Highest role whose group list intersects the user's groups; null when none. */
export function roleForGroups(config: OidcConfig, groups: string[]): Role | null {
  const mine = new Set(groups);
  return ROLES_HIGHEST_FIRST.find((role) => config.roles[role].some((group) => mine.has(group))) ?? null;
}

/** A groups claim: an array of strings, or one string (one group); anything else is no groups. */
export function groupsFrom(value: unknown): string[] {
  if (typeof value === 'string') return value.length > 0 ? [value] : [];
  if (Array.isArray(value) && value.every((group) => typeof group === 'string')) return value.filter((group) => group.length > 0);
  return [];
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim().length > 0 ? value.trim().slice(0, MAX_NAME_LENGTH) : null;
}

/** The name to show: the username claim, else the email, else the subject. */
export function nameFrom(config: OidcConfig, claims: Record<string, unknown>, subject: string): string {
  return text(claims[config.usernameClaim]) ?? text(claims.email) ?? subject;
}

export function emailFrom(claims: Record<string, unknown>): string | null {
  return text(claims.email);
}
