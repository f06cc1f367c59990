// Users, API tokens and sign-in answers as the API shows them (docs/api.md "Users and tokens",
// "Signing in"): never a password hash, a token or its hash (but the new token, once).
import { z } from 'zod';
import { ROLES, TOKEN_ROLES } from '../roles';
import { isoTime } from './lease';

export const userViewSchema = z.object({
  id: z.string(),
  name: z.string(),
  role: z.enum(ROLES),
  signsInWith: z.enum(['password', 'oidc']),
  createdAt: isoTime,
  disabledAt: isoTime.nullable(),
});

export const apiTokenViewSchema = z.object({
  id: z.string(),
  name: z.string(),
  role: z.enum(TOKEN_ROLES),
  /** Its first 10 characters. */
  prefix: z.string(),
  /** The user it belongs to, or null. */
  user: z.string().nullable(),
  createdBy: z.string().nullable(),
  createdAt: isoTime,
  lastUsedAt: isoTime.nullable(),
  expiresAt: isoTime.nullable(),
  revokedAt: isoTime.nullable(),
});

/** GET /api/v1/users */
export const usersAndTokensSchema = z.object({ users: z.array(userViewSchema), tokens: z.array(apiTokenViewSchema) });
/** GET /api/v1/tokens */
export const tokensSchema = z.object({ tokens: z.array(apiTokenViewSchema) });
/** POST /api/v1/tokens, 201: the token itself, shown this once. */
export const newTokenSchema = apiTokenViewSchema.extend({ token: z.string() });
/** POST /api/v1/auth/logout */
export const signedOutSchema = z.object({ signedIn: z.literal(false) });

export type UserView = z.infer<typeof userViewSchema>;
export type ApiTokenView = z.infer<typeof apiTokenViewSchema>;
