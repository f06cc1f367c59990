import { describe, expect, it } from 'vitest';
import { generateWebhookSecret, parseWebhookSecret } from './secret';

describe('webhook secrets', () => {
  it('generates whsec_ and the base64 of 32 random bytes, each one new', () => {
    const a = generateWebhookSecret();
    const b = generateWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(a).not.toBe(b);
    expect(parseWebhookSecret(a)).toHaveLength(32);
  });

  it('decodes the key of the Standard Webhooks test secret (24 bytes, the minimum)', () => {
    expect(parseWebhookSecret('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')).toEqual(Buffer.from('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'base64'));
  });

  it('takes 24 to 64 bytes, padded or not', () => {
    expect(parseWebhookSecret(`whsec_${Buffer.alloc(64, 7).toString('base64')}`)).toHaveLength(64);
    expect(parseWebhookSecret(`whsec_${Buffer.alloc(25, 7).toString('base64').replace(/=+$/, '')}`)).toHaveLength(25);
  });

  it.each([
    ['no prefix', Buffer.alloc(32, 1).toString('base64'), /expected "whsec_"/],
    ['another prefix', `whsk_${Buffer.alloc(32, 1).toString('base64')}`, /expected "whsec_"/],
    ['nothing after the prefix', 'whsec_', /not base64/],
    ['not base64', 'whsec_this is not*base64!!', /not base64/],
    ['base64url characters', `whsec_${Buffer.alloc(32, 0xfb).toString('base64url')}`, /not base64/],
    ['stray bits in the last character', 'whsec_BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBx==', /not canonical/],
    ['too short (16 bytes)', `whsec_${Buffer.alloc(16, 1).toString('base64')}`, /decodes to 16 bytes/],
    ['too long (65 bytes)', `whsec_${Buffer.alloc(65, 1).toString('base64')}`, /decodes to 65 bytes/],
  ])('refuses %s with a message that says what was expected', (_name, secret, message) => {
    expect(() => parseWebhookSecret(secret)).toThrow(message);
    expect(() => parseWebhookSecret(secret)).toThrow(/24 to 64 bytes/);
  });

  it('never repeats the secret in its error', () => {
    const secret = `whsec_${Buffer.alloc(16, 0xab).toString('base64')}`;
    try {
      parseWebhookSecret(secret);
      expect.unreachable();
    } catch (error) {
      expect((error as Error).message).not.toContain(secret.slice(6));
    }
  });
});
