// Webhook signing secrets as the Standard Webhooks specification serializes them: `whsec_`
// and the base64 of 24 to 64 random bytes (192 to 512 bits). The HMAC key is the decoded
// bytes, not the text: a receiver's library decodes it the same way.
import { randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';
const MIN_BYTES = 24;
const MAX_BYTES = 64;
const GENERATED_BYTES = 32;
// Standard base64 (the spec's alphabet), padding optional: receivers' libraries accept both.
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** A new secret: `whsec_` and the base64 of 32 random bytes. Shown once, stored encrypted or hashed by the caller. */
export function generateWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(GENERATED_BYTES).toString('base64');
}

/**
 * The HMAC key a `whsec_` secret stands for. The error never repeats the secret (it ends up
 * in logs and API answers); it says what shape was expected.
 */
export function parseWebhookSecret(secret: string): Buffer {
  const expected = `expected "${SECRET_PREFIX}" followed by the base64 of ${MIN_BYTES} to ${MAX_BYTES} bytes`;
  if (typeof secret !== 'string' || !secret.startsWith(SECRET_PREFIX)) {
    throw new Error(`not a webhook secret: ${expected}`);
  }
  const encoded = secret.slice(SECRET_PREFIX.length);
  const unpadded = encoded.replace(/=+$/, '');
  // Node's decoder skips characters it does not know: check the text first, then that it
  // decodes to exactly what it says (no stray bits in the last character, padding right).
  if (!BASE64.test(encoded) || unpadded.length % 4 === 1 || (encoded !== unpadded && encoded.length % 4 !== 0)) {
    throw new Error(`not a webhook secret: the part after "${SECRET_PREFIX}" is not base64; ${expected}`);
  }
  const key = Buffer.from(unpadded, 'base64');
  if (key.toString('base64').replace(/=+$/, '') !== unpadded) {
    throw new Error(`not a webhook secret: the part after "${SECRET_PREFIX}" is not canonical base64; ${expected}`);
  }
  if (key.length < MIN_BYTES || key.length > MAX_BYTES) {
    throw new Error(`not a webhook secret: it decodes to ${key.length} bytes; ${expected}`);
  }
  return key;
}
