// Signing in with a name and a password. Failed attempts are limited per user name and per
// address, counted in the store (lib/db/sign-in-limits.ts), so every console process of one
// store shares the allowance: past the limit, 429 with Retry-After, and the password is not
// even checked. The log line names the user and the
// address, never the password. A user who does not exist, a disabled user, an OIDC-only
// user and a wrong password all get the same answer after the same work.
import type { Config } from '../config';
import { clearSignIns, giveSignInBack, takeSignIn } from '../db/sign-in-limits';
import { findUserByName, type UserRecord } from '../db/users';
import type { Store } from '../db/store';
import { logger } from '../log';
import { AuthError } from './errors';
import { verifyPassword } from './password';
import { SESSION_COOKIES } from './cookies';
import { cookiesOf } from './principal';
import { endSession, startSession } from './session';
import { sha256 } from './secrets';

/** Failures allowed per user name, and per address, in WINDOW_SECONDS. */
export const FAILURES_PER_USER = 5;
export const FAILURES_PER_ADDRESS = 20;
const WINDOW_MS = 15 * 60 * 1000;

const userKey = (name: string) => `user:${name.toLowerCase()}`;
const addressKey = (address: string) => `address:${address}`;

function tooMany(msBeforeNext: number): AuthError {
  const seconds = Math.max(1, Math.ceil(msBeforeNext / 1000));
  return new AuthError(429, 'too_many_attempts', `Too many failed sign-ins: try again in ${seconds} s.`, { 'Retry-After': String(seconds) });
}

/**
 * Takes one attempt from the user name's and the address's allowance before the password is
 * checked: attempts sent at once cannot all pass a check made before any of them failed.
 * 429 when either is used up (and nothing is taken from the other). Returns what gives it back.
 */
async function takeAttempt(store: Store, name: string, address: string): Promise<() => Promise<unknown>> {
  const taken: string[] = [];
  const giveBack = () => Promise.all(taken.map((key) => giveSignInBack(store, key)));
  try {
    // The address first: an address past its limit leaves no row for the (perhaps made-up) name it tried.
    for (const [key, limit] of [[addressKey(address), FAILURES_PER_ADDRESS], [userKey(name), FAILURES_PER_USER]] as const) {
      const result = await takeSignIn(store, key, limit, WINDOW_MS);
      if (!result.allowed) throw tooMany(result.msBeforeReset);
      taken.push(key);
    }
  } catch (error) {
    // Used up, or the store did not answer: nothing is left taken.
    await giveBack().catch(() => {});
    throw error;
  }
  return giveBack;
}

export type SignInResult = { user: UserRecord; cookieValue: string; maxAgeSeconds: number };

export async function signIn(store: Store, config: Config, name: string, password: string, address: string): Promise<SignInResult> {
  const giveBack = await takeAttempt(store, name, address);
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
  await Promise.all([clearSignIns(store, userKey(name)), giveSignInBack(store, addressKey(address))]);
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
