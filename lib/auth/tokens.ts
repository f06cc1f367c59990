// API tokens: `lh_<id>_<secret>`, sent as `Authorization: Bearer`. Shown once, at creation;
// the store keeps the sha256 of the secret. A token has its own role; a token made for a user
// acts with at most that user's current role, and stops with the user.
import type { Role } from '../config/auth-schema';
import { findApiToken, insertApiToken, touchApiToken, type ApiTokenRecord } from '../db/api-tokens';
import type { Store } from '../db/store';
import { AuthError } from './errors';
import { lowerRole } from './permissions';
import type { Principal } from './principal';
import { newApiToken, parseApiToken, sameHash, sha256 } from './secrets';
import { systemClock } from '../time/clock';

const TOUCH_EVERY_MS = 60_000;

export async function createToken(
  store: Store,
  request: { name: string; role: Role; expiresAt: Date | null; userId: string | null; createdBy: string },
): Promise<{ token: string; record: ApiTokenRecord }> {
  const { id, secret, token } = newApiToken();
  const record = await insertApiToken(store, {
    id,
    name: request.name,
    role: request.role,
    tokenHash: sha256(secret),
    prefix: token.slice(0, 10),
    userId: request.userId,
    createdBy: request.createdBy,
    expiresAt: request.expiresAt,
  });
  return { token, record };
}

const invalid = () =>
  new AuthError(401, 'invalid_token', 'The bearer token is not valid: it is malformed, unknown, expired or revoked (leasehold tokens create makes a new one).', {
    'WWW-Authenticate': 'Bearer realm="leasehold", error="invalid_token"',
  });

/** The principal of a bearer token; AuthError 401 when it is malformed, unknown, expired, revoked, or its user is disabled. */
export async function tokenPrincipal(store: Store, text: string, address: string, now = new Date(systemClock.wall())): Promise<Principal> {
  const parsed = parseApiToken(text);
  if (!parsed) throw invalid();
  const token = await findApiToken(store, parsed.id);
  if (!token || !sameHash(token.tokenHash, sha256(parsed.secret))) throw invalid();
  if (token.revokedAt !== null || (token.expiresAt !== null && token.expiresAt.getTime() <= now.getTime())) throw invalid();
  if (token.user && token.user.disabledAt !== null) throw invalid();
  if (token.lastUsedAt === null || now.getTime() - token.lastUsedAt.getTime() >= TOUCH_EVERY_MS) await touchApiToken(store, token.id, now);
  const role = token.user ? lowerRole(token.role, token.user.role) : token.role;
  return { name: token.name, role, method: 'token', userId: token.userId, tokenId: token.id, sessionId: null, address };
}
