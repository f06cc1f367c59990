// Signing in with a name and a password. Failed attempts are limited per user name and per
// address (rate-limiter-flexible, in this process's memory): past the limit, 429 with
// Retry-After, and the password is not even checked. The log line names the user and the
// address, never the password. A user who does not exist, a disabled user, an OIDC-only
// user and a wrong password all get the same answer after the same work.
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { Config } from '../config';
import { findUserByName, type UserRecord } from '../db/users';
import type { Store } from '../db/store';
import { logger } from '../log';
import { AuthError } from './errors';
import { verifyPassword } from './password';
import { startSession } from './session';

/** Failures allowed per user name, and per address, in WINDOW_SECONDS. */
export const FAILURES_PER_USER = 5;
export const FAILURES_PER_ADDRESS = 20;
const WINDOW_SECONDS = 15 * 60;

const limits = globalThis as typeof globalThis & { __leaseholdSignInLimits?: { user: RateLimiterMemory; address: RateLimiterMemory } };
function limiters() {
  return (limits.__leaseholdSignInLimits ??= {
    user: new RateLimiterMemory({ keyPrefix: 'user', points: FAILURES_PER_USER, duration: WINDOW_SECONDS }),
    address: new RateLimiterMemory({ keyPrefix: 'address', points: FAILURES_PER_ADDRESS, duration: WINDOW_SECONDS }),
  });
}

function tooMany(msBeforeNext: number): AuthError {
  const seconds = Math.max(1, Math.ceil(msBeforeNext / 1000));
  return new AuthError(429, 'too_many_attempts', `Too many failed sign-ins: try again in ${seconds} s.`, { 'Retry-After': String(seconds) });
}

/** Throws 429 when the user name or the address has used up its failures. */
async function checkLimits(name: string, address: string) {
  const { user, address: byAddress } = limiters();
  for (const [limiter, key, points] of [[user, name.toLowerCase(), FAILURES_PER_USER], [byAddress, address, FAILURES_PER_ADDRESS]] as const) {
    const state = await limiter.get(key);
    if (state && state.consumedPoints >= points) throw tooMany(state.msBeforeNext);
  }
}

async function countFailure(name: string, address: string) {
  const { user, address: byAddress } = limiters();
  await Promise.all([user.consume(name.toLowerCase()), byAddress.consume(address)].map((p) => p.catch((error: unknown) => {
    if (!(error instanceof RateLimiterRes)) throw error;
  })));
}

export type SignInResult = { user: UserRecord; cookieValue: string; maxAgeSeconds: number };

export async function signIn(store: Store, config: Config, name: string, password: string, address: string): Promise<SignInResult> {
  await checkLimits(name, address);
  const user = await findUserByName(store, name);
  const matches = await verifyPassword(password, user?.passwordHash ?? null);
  if (!user || !matches || user.disabledAt !== null) {
    await countFailure(name, address);
    logger('auth').warn({ user: name.slice(0, 100), address, reason: !user ? 'no such user' : !matches ? 'wrong password' : 'disabled' }, 'sign-in failed');
    throw new AuthError(401, 'sign_in_failed', 'The name or the password is wrong.');
  }
  await limiters().user.delete(name.toLowerCase());
  const session = await startSession(store, config.auth, user, 'password', address);
  logger('auth').info({ user: user.name, address }, 'signed in');
  return { user, ...session };
}
