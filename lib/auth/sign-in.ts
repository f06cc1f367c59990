// Signing in with a name and a password. Failed attempts are limited per user name and per
// address (rate-limiter-flexible, in the memory of the server's composition root): past the limit, 429 with
// Retry-After, and the password is not even checked. The log line names the user and the
// address, never the password. A user who does not exist, a disabled user, an OIDC-only
// user and a wrong password all get the same answer after the same work.
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { Config } from '../config';
import { findUserByName, type UserRecord } from '../db/users';
import type { Store } from '../db/store';
import { logger } from '../log';
import { part, type Parts } from '../parts';
import { AuthError } from './errors';
import { verifyPassword } from './password';
import { SESSION_COOKIES } from './cookies';
import { cookiesOf } from './principal';
import { endSession, startSession } from './session';
import { sha256 } from './secrets';

/** Failures allowed per user name, and per address, in WINDOW_SECONDS. */
export const FAILURES_PER_USER = 5;
export const FAILURES_PER_ADDRESS = 20;
const WINDOW_SECONDS = 15 * 60;

/** The failures counted in one composition root (lib/root): the server's, or a test's. */
const SIGN_IN_LIMITS = part('sign-in limits', () => ({
  user: new RateLimiterMemory({ keyPrefix: 'user', points: FAILURES_PER_USER, duration: WINDOW_SECONDS }),
  address: new RateLimiterMemory({ keyPrefix: 'address', points: FAILURES_PER_ADDRESS, duration: WINDOW_SECONDS }),
}));

function tooMany(msBeforeNext: number): AuthError {
  const seconds = Math.max(1, Math.ceil(msBeforeNext / 1000));
  return new AuthError(429, 'too_many_attempts', `Too many failed sign-ins: try again in ${seconds} s.`, { 'Retry-After': String(seconds) });
}

/**
 * Takes one attempt from the user name's and the address's allowance before the password is
 * checked: attempts sent at once cannot all pass a check made before any of them failed.
 * 429 when either is used up (and nothing is taken from the other). Returns what gives it back.
 */
async function takeAttempt(root: Parts, name: string, address: string): Promise<() => Promise<unknown>> {
  const { user, address: byAddress } = root.part(SIGN_IN_LIMITS);
  const taken: (() => Promise<unknown>)[] = [];
  const giveBack = () => Promise.all(taken.map((give) => give()));
  try {
    for (const [limiter, key] of [[user, name.toLowerCase()], [byAddress, address]] as const) {
      await limiter.consume(key);
      taken.push(() => limiter.reward(key));
    }
  } catch (error) {
    if (!(error instanceof RateLimiterRes)) throw error;
    await giveBack();
    throw tooMany(error.msBeforeNext);
  }
  return giveBack;
}

export type SignInResult = { user: UserRecord; cookieValue: string; maxAgeSeconds: number };

export async function signIn(root: Parts, store: Store, config: Config, name: string, password: string, address: string): Promise<SignInResult> {
  const giveBack = await takeAttempt(root, name, address);
  // A store that cannot answer is not a failed attempt.
  const [user, matches] = await (async () => {
    const found = await findUserByName(store, name);
    return [found, await verifyPassword(password, found?.passwordHash ?? null)] as const;
  })().catch(async (error: unknown) => {
    await giveBack();
    throw error;
  });
  if (!user || !matches || user.disabledAt !== null) {
    logger('auth').warn({ user: name.slice(0, 100), address, reason: !user ? 'no such user' : !matches ? 'wrong password' : 'disabled' }, 'sign-in failed');
    throw new AuthError(401, 'sign_in_failed', 'The name or the password is wrong.');
  }
  // A success clears the user name's failures, and is not counted against the address.
  const limits = root.part(SIGN_IN_LIMITS);
  await Promise.all([limits.user.delete(name.toLowerCase()), limits.address.reward(address)]);
  const session = await startSession(store, config.auth, user, 'password', address);
  logger('auth').info({ user: user.name, address }, 'signed in');
  return { user, ...session };
}

/** Ends the session the request's cookie names, if any (a sign-in replaces it). */
export async function endPreviousSession(store: Store, headers: Headers): Promise<void> {
  const cookies = cookiesOf(headers);
  for (const name of SESSION_COOKIES) {
    const value = cookies.get(name);
    if (value) await endSession(store, sha256(value));
  }
}
