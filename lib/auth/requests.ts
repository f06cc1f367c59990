// The bodies of the sign-in routes, and the answer that sets or clears the session cookie.
import { z } from 'zod';
import { invalidBody } from '../api/body';
import type { Principal } from './principal';

export const signInBody = z.strictObject({
  name: z.string().min(1).max(200),
  password: z.string().min(1).max(1024),
});

export function parseBody<S extends z.ZodType>(schema: S, value: unknown, expected: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length ? `"${issue.path.join('.')}"` : 'the body';
    throw invalidBody(`${expected} (${where}: ${issue.message}).`);
  }
  return parsed.data;
}

/** What GET /api/v1/auth/me and the sign-in answer say about a principal. */
export function principalView(principal: Principal | null) {
  return principal === null ? { signedIn: false, name: null, role: null, method: null } : { signedIn: principal.method !== 'anonymous', name: principal.name, role: principal.role, method: principal.method };
}
