// Random secrets and their stored form: a session's cookie value and an API token's secret
// are 32 random bytes (256 bits); only their sha256 is stored. A high-entropy secret needs no
// slow hash: sha256 of it cannot be searched.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export function randomSecret(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

export function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

/** API tokens: `lh_<id>_<secret>`, id 16 hex characters, secret 43 base64url characters (256 bits). */
const TOKEN = /^lh_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;

export function newApiToken(): { id: string; secret: string; token: string } {
  const id = randomBytes(8).toString('hex');
  const secret = randomSecret(32);
  return { id, secret, token: `lh_${id}_${secret}` };
}

export function parseApiToken(text: string): { id: string; secret: string } | null {
  const match = TOKEN.exec(text);
  return match ? { id: match[1]!, secret: match[2]! } : null;
}
