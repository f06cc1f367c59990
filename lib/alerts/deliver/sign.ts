// Standard Webhooks signatures: `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body`,
// keyed with the decoded secret. While a secret is being rotated the message is signed with
// each (current first, then the previous one), space-separated in one header, so receivers
// that still hold the old secret and those that have the new one both verify it.
import { createHmac } from 'node:crypto';
import { parseWebhookSecret } from './secret';

export type WebhookHeaders = {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
};

// The spec: the id and timestamp must not be user controlled, or at least hold no `.`, which
// would let one signed content read as another. Ours are made by Leasehold; this checks it
// (and that the id is printable ASCII, fit for a header).
const MESSAGE_ID = /^[\x21-\x2d\x2f-\x7e]{1,256}$/;

function signedContent(id: string, timestampSeconds: number, body: string | Uint8Array): Buffer {
  if (!MESSAGE_ID.test(id)) {
    throw new Error('webhook id must be 1 to 256 printable ASCII characters without spaces or "." (a "." separates the signed parts)');
  }
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) {
    throw new Error(`webhook timestamp must be whole seconds since the epoch, not ${timestampSeconds}`);
  }
  return Buffer.concat([Buffer.from(`${id}.${timestampSeconds}.`, 'utf8'), typeof body === 'string' ? Buffer.from(body, 'utf8') : body]);
}

/** `v1,<sig>` for each secret, space-separated: the value of the webhook-signature header. */
export function signatureHeader(secrets: string[], id: string, timestampSeconds: number, body: string | Uint8Array): string {
  if (secrets.length === 0) throw new Error('cannot sign a webhook without a secret');
  const content = signedContent(id, timestampSeconds, body);
  return secrets.map((secret) => `v1,${createHmac('sha256', parseWebhookSecret(secret)).update(content).digest('base64')}`).join(' ');
}

/** The three Standard Webhooks headers for one attempt (a retry keeps the id and gets a new timestamp). */
export function webhookHeaders(input: { id: string; timestampSeconds: number; body: string | Uint8Array; secrets: string[] }): WebhookHeaders {
  return {
    'webhook-id': input.id,
    'webhook-timestamp': String(input.timestampSeconds),
    'webhook-signature': signatureHeader(input.secrets, input.id, input.timestampSeconds, input.body),
  };
}
