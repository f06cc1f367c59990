// Passwords, hashed with scrypt (node:crypto): `scrypt$<N>$<r>$<p>$<salt b64>$<hash b64>`.
// Parameters: N = 2^15, r = 8, p = 1 (OWASP's minimum for scrypt is N = 2^17 with p = 1 at
// r = 8 for ~64 MiB; 2^15 costs ~50 ms and 32 MiB here, which a sign-in rate limit makes
// enough). The parameters are stored with each hash, so they can be raised later.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const N = 2 ** 15;
const R = 8;
const P = 1;
const KEY_BYTES = 32;
export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 1024;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFKC'), salt, KEY_BYTES, { ...options, maxmem: 256 * (options.N ?? N) * (options.r ?? R) }, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, { N, r: R, p: P });
  return ['scrypt', N, R, P, salt.toString('base64'), key.toString('base64')].join('$');
}

/** Why a new password cannot be used, or null. */
export function passwordProblem(password: string): string | null {
  if (password.length < MIN_PASSWORD_LENGTH) return `a password must have at least ${MIN_PASSWORD_LENGTH} characters`;
  if (password.length > MAX_PASSWORD_LENGTH) return `a password may have at most ${MAX_PASSWORD_LENGTH} characters`;
  if (password.trim() !== password) return 'a password may not begin or end with spaces';
  return null;
}

const parse = (stored: string) => {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return null;
  const [n, r, p] = parts.slice(1, 4).map(Number);
  // At most 8 times today's cost (N·r·p): a hash planted in the store cannot make one check take minutes.
  if (![n, r, p].every((x) => Number.isInteger(x) && x! > 0) || n! * r! * p! > 8 * N * R * P) return null;
  return { N: n!, r: r!, p: p!, salt: Buffer.from(parts[4]!, 'base64'), key: Buffer.from(parts[5]!, 'base64') };
};

// A user who does not exist costs as much as one who does: no timing tells them apart.
let decoy: Promise<string> | undefined;

/** Whether `password` matches `stored`; null or unreadable `stored` (no such user, no password) is false after the same work. */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const parsed = stored === null || password.length > MAX_PASSWORD_LENGTH ? null : parse(stored);
  // Parameters scrypt refuses (N not a power of two, past the memory limit) fail at once: unreadable too.
  const key = parsed === null ? null : await derive(password, parsed.salt, parsed).catch(() => null);
  if (parsed === null || key === null) {
    const fake = parse(await (decoy ??= hashPassword('not a password of anybody')))!;
    await derive(password.slice(0, MAX_PASSWORD_LENGTH), fake.salt, fake);
    return false;
  }
  return key.length === parsed.key.length && timingSafeEqual(key, parsed.key);
}
