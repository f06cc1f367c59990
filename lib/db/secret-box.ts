// Secrets the store must keep usable (a webhook's signing secrets, a PagerDuty routing key),
// encrypted at rest: whoever reads the store, or a backup of it, must not be able to sign
// alerts in Leasehold's name. Passwords, sessions and API tokens need no such thing: the store
// keeps only their hashes. These are used, so they are sealed with AES-256-GCM under a key
// that lives outside the store, in the environment:
//
//   LEASEHOLD_SECRET_KEY           32 random bytes, base64 (`openssl rand -base64 32`) or 64 hex
//                                  digits: seals everything written from now on
//   LEASEHOLD_SECRET_KEY_PREVIOUS  older keys, comma-separated: only to open what they sealed,
//                                  while a rotation is under way (the server seals it again
//                                  with the current key when it starts)
//
// A sealed value is `lhenc:v1:<key id>:<base64url of iv, ciphertext and tag>`; the key id is
// the first 8 bytes of a SHA-256 of the key, so that a value names the key it needs without
// saying anything of it. Each value is bound to where it is kept (its associated data, e.g.
// "webhook <id> secret"): a sealed secret copied to another row does not open there. A value
// without the prefix was written before secrets were sealed (or is the demo's own endpoint,
// kept while no key is set): it is read as it is, and sealed when a key is there.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

export const SECRET_KEY_ENV = 'LEASEHOLD_SECRET_KEY';
export const PREVIOUS_KEYS_ENV = 'LEASEHOLD_SECRET_KEY_PREVIOUS';
const PREFIX = 'lhenc:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

type Key = { id: string; bytes: Buffer };
export type Keyring = { current: Key | null; byId: ReadonlyMap<string, Key> };

/** A key in the environment that is not one: the variable and what was wrong, never the value. */
export class SecretKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretKeyError';
  }
}

/** Something must be sealed and no key is set. */
export class SecretKeyMissingError extends Error {
  constructor(what: string) {
    super(`${what} is stored encrypted with ${SECRET_KEY_ENV}, which is not set on this server. Set it to 32 random bytes (\`openssl rand -base64 32\`) for every Leasehold process, and keep it out of the store's backups (docs/security.md).`);
    this.name = 'SecretKeyMissingError';
  }
}

/** A sealed value this process cannot open: sealed with a key it does not have, or not intact. */
export class SecretUnreadableError extends Error {
  constructor(
    readonly keyId: string | null,
    message: string,
  ) {
    super(message);
    this.name = 'SecretUnreadableError';
  }
}

export const keyIdOf = (bytes: Buffer) => createHash('sha256').update('leasehold secret key id\0').update(bytes).digest('hex').slice(0, 16);

function parseKey(text: string, variable: string): Key {
  const trimmed = text.trim();
  const bytes = /^[0-9a-f]{64}$/i.test(trimmed) ? Buffer.from(trimmed, 'hex') : /^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed) ? Buffer.from(trimmed, 'base64') : null;
  if (!bytes || bytes.length !== 32) {
    throw new SecretKeyError(`${variable}: expected 32 random bytes written as base64 (\`openssl rand -base64 32\`) or as 64 hex digits, found ${bytes ? `${bytes.length} bytes` : 'text that is neither'}`);
  }
  return { id: keyIdOf(bytes), bytes };
}

/** The keys the environment names; throws SecretKeyError naming the variable when one is malformed. */
export function keyringOf(env: Record<string, string | undefined>): Keyring {
  const current = env[SECRET_KEY_ENV]?.trim() ? parseKey(env[SECRET_KEY_ENV]!, SECRET_KEY_ENV) : null;
  const previous = (env[PREVIOUS_KEYS_ENV] ?? '')
    .split(',')
    .filter((part) => part.trim() !== '')
    .map((part, index) => parseKey(part, `${PREVIOUS_KEYS_ENV} (key ${index + 1})`));
  const byId = new Map<string, Key>();
  for (const key of [...previous, ...(current ? [current] : [])]) byId.set(key.id, key);
  return { current, byId };
}

// A memo of the last environment read (a second copy of this module under Next reads it once more).
let memo: { source: string; keyring: Keyring } | undefined;

/** This process's keys, from its environment (read again when it changes: tests set it). */
export function processKeyring(): Keyring {
  const source = `${process.env[SECRET_KEY_ENV] ?? ''}\n${process.env[PREVIOUS_KEYS_ENV] ?? ''}`;
  if (memo?.source !== source) memo = { source, keyring: keyringOf(process.env) };
  return memo.keyring;
}

export const isSealed = (stored: string) => stored.startsWith(PREFIX);

/** The id of the key a stored value was sealed with; null for a value kept as it is. */
export function sealedKeyId(stored: string): string | null {
  if (!isSealed(stored)) return null;
  return stored.slice(PREFIX.length, stored.indexOf(':', PREFIX.length));
}

/** `plain` sealed with the current key, bound to `context`; SecretKeyMissingError without one (`what` names it). */
export function seal(keyring: Keyring, plain: string, context: string, what: string): string {
  const key = keyring.current;
  if (!key) throw new SecretKeyMissingError(what);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key.bytes, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const sealed = Buffer.concat([iv, cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `${PREFIX}${key.id}:${sealed.toString('base64url')}`;
}

/** What a stored value holds: opened when sealed (SecretUnreadableError when it cannot be), as it is otherwise. */
export function unseal(keyring: Keyring, stored: string, context: string): string {
  if (!isSealed(stored)) return stored;
  const keyId = sealedKeyId(stored)!;
  const key = keyring.byId.get(keyId);
  if (!key) {
    const have = keyring.byId.size === 0 ? `${SECRET_KEY_ENV} is not set` : `this process has ${[...keyring.byId.keys()].join(', ')}`;
    throw new SecretUnreadableError(keyId, `it was encrypted with the key ${keyId}, and ${have} (set that key as ${SECRET_KEY_ENV}, or in ${PREVIOUS_KEYS_ENV} while rotating)`);
  }
  const bytes = Buffer.from(stored.slice(PREFIX.length + keyId.length + 1), 'base64url');
  try {
    if (bytes.length < IV_BYTES + TAG_BYTES) throw new Error('too short');
    const decipher = createDecipheriv('aes-256-gcm', key.bytes, bytes.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretUnreadableError(keyId, `it does not open with the key ${keyId}: it was changed in the store, or copied from another endpoint`);
  }
}

/** Whether a stored value should be sealed again: kept as it is, or sealed with a key that is not the current one. */
export const needsResealing = (keyring: Keyring, stored: string) => keyring.current !== null && sealedKeyId(stored) !== keyring.current.id;
