import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { generateWebhookSecret } from './secret';
import { signatureHeader, webhookHeaders } from './sign';

// The vector of the Standard Webhooks reference library's own test ("sign function works",
// libraries/javascript/src/webhook.test.ts in standard-webhooks/standard-webhooks).
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

const nowSeconds = () => Math.floor(Date.now() / 1000);

describe('Standard Webhooks signatures', () => {
  it('matches the specification repository test vector', () => {
    expect(signatureHeader([VECTOR.secret], VECTOR.id, VECTOR.timestamp, VECTOR.body)).toBe(VECTOR.signature);
    expect(signatureHeader([VECTOR.secret], VECTOR.id, VECTOR.timestamp, Buffer.from(VECTOR.body))).toBe(VECTOR.signature);
  });

  it('verifies with the standardwebhooks package', () => {
    const secret = generateWebhookSecret();
    const body = JSON.stringify({ type: 'alert.firing', key: 'lease/ünïcode/🔒' });
    const headers = webhookHeaders({ id: 'dlv_01J9Z', timestampSeconds: nowSeconds(), body, secrets: [secret] });
    expect(Object.keys(headers).sort()).toEqual(['webhook-id', 'webhook-signature', 'webhook-timestamp']);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(generateWebhookSecret()).verify(body, headers)).toThrow(/No matching signature/);
    expect(() => new Webhook(secret).verify(`${body} `, headers)).toThrow(/No matching signature/);
  });

  it('signs with every secret while rotating: each receiver verifies with the one it has', () => {
    const current = generateWebhookSecret();
    const previous = generateWebhookSecret();
    const body = '{"a":1}';
    const headers = webhookHeaders({ id: 'msg_rotate', timestampSeconds: nowSeconds(), body, secrets: [current, previous] });
    const parts = headers['webhook-signature'].split(' ');
    expect(parts).toHaveLength(2);
    for (const part of parts) expect(part).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(parts[0]).toBe(signatureHeader([current], 'msg_rotate', Number(headers['webhook-timestamp']), body));
    expect(parts[1]).toBe(signatureHeader([previous], 'msg_rotate', Number(headers['webhook-timestamp']), body));
    expect(new Webhook(current).verify(body, headers)).toEqual({ a: 1 });
    expect(new Webhook(previous).verify(body, headers)).toEqual({ a: 1 });
  });

  it('refuses what would make the signed content ambiguous or unsigned', () => {
    const secret = generateWebhookSecret();
    expect(() => signatureHeader([], 'msg_1', 1, '{}')).toThrow(/without a secret/);
    expect(() => signatureHeader([secret], 'msg.1', 1, '{}')).toThrow(/"\."/);
    expect(() => signatureHeader([secret], 'msg 1', 1, '{}')).toThrow(/webhook id/);
    expect(() => signatureHeader([secret], '', 1, '{}')).toThrow(/webhook id/);
    expect(() => signatureHeader([secret], 'msg_1', 1.5, '{}')).toThrow(/whole seconds/);
    expect(() => signatureHeader([secret], 'msg_1', -1, '{}')).toThrow(/whole seconds/);
    expect(() => signatureHeader(['not-a-secret'], 'msg_1', 1, '{}')).toThrow(/not a webhook secret/);
  });
});
