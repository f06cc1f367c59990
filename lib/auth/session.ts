// Sessions: a cookie holding 32 random bytes; the store keeps only their sha256. A session
// ends after `sessionIdleMinutes` without use and `sessionMaxHours` after sign-in, at
// sign-out, and when its user is disabled or given a new password. A new one is made at every
// sign-in (never reused: no fixation).
import type { AuthConfig } from '../config/auth-schema';
import { deleteEndedSessions, deleteSession, findSession, insertSession, touchSession } from '../db/sessions';
import type { UserRecord } from '../db/users';
import type { Store } from '../db/store';
import type { Principal } from './principal';
import { randomSecret, sha256 } from './secrets';
import { systemClock } from '../time/clock';

/** lastSeenAt is written at most this often per session. */
const TOUCH_EVERY_MS = 60_000;
const COOKIE_VALUE = /^[A-Za-z0-9_-]{43}$/;

export async function startSession(
  store: Store,
  auth: AuthConfig,
  user: UserRecord,
  method: 'password' | 'oidc',
  address: string,
  now = new Date(systemClock.wall()),
): Promise<{ cookieValue: string; maxAgeSeconds: number }> {
  await deleteEndedSessions(store, now, new Date(now.getTime() - auth.sessionIdleMinutes * 60_000));
  const cookieValue = randomSecret(32);
  const maxAgeSeconds = auth.sessionMaxHours * 3600;
  await insertSession(store, { id: sha256(cookieValue), userId: user.id, authMethod: method, address, expiresAt: new Date(now.getTime() + maxAgeSeconds * 1000) });
  return { cookieValue, maxAgeSeconds };
}

/** The principal of a session cookie's value, or null when it names no live session. */
export async function sessionPrincipal(store: Store, auth: AuthConfig, cookieValue: string, address: string, now = new Date(systemClock.wall())): Promise<Principal | null> {
  if (!COOKIE_VALUE.test(cookieValue)) return null;
  const id = sha256(cookieValue);
  const session = await findSession(store, id);
  if (!session) return null;
  const idleEnd = session.lastSeenAt.getTime() + auth.sessionIdleMinutes * 60_000;
  if (session.expiresAt.getTime() <= now.getTime() || idleEnd <= now.getTime() || session.user.disabledAt !== null) {
    await deleteSession(store, id);
    return null;
  }
  if (now.getTime() - session.lastSeenAt.getTime() >= TOUCH_EVERY_MS) await touchSession(store, id, now);
  const method = session.authMethod === 'oidc' ? 'oidc' : 'password';
  return { name: session.user.name, role: session.user.role, method, userId: session.userId, tokenId: null, sessionId: id, address };
}

export async function endSession(store: Store, sessionId: string): Promise<void> {
  await deleteSession(store, sessionId);
}
