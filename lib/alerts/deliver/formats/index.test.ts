import { describe, expect, it } from 'vitest';
import type { AlertMessage } from '../../../domain/alert-types';
import { buildRequest, isWebhookFormat, WEBHOOK_FORMATS, type WebhookFormat } from './index';
import { CTX, hasLoneSurrogate, hostile, message, resolved } from './test-fixtures';

const SOURCE_DOWN = message(
  {
    rule: { id: 'r2', name: 'redis down', type: 'source_down' },
    severity: 'critical',
    leaseId: null,
    leaseKey: null,
    holder: null,
    previousHolder: null,
    token: null,
    previousToken: null,
    ttlMs: null,
    marginMs: null,
    gapMs: null,
    detail: null,
  },
  'alert.firing',
  null,
);

const MESSAGES: [string, AlertMessage][] = [
  ['firing', message()],
  ['resolved', resolved()],
  ['test', message({}, 'alert.test')],
  ['source_down with nulls', SOURCE_DOWN],
  ['hostile', hostile()],
];

describe('buildRequest', () => {
  it('knows the five formats', () => {
    expect(WEBHOOK_FORMATS).toEqual(['native', 'slack', 'pagerduty', 'alertmanager-webhook', 'alertmanager']);
    expect(isWebhookFormat('slack')).toBe(true);
    expect(isWebhookFormat('teams')).toBe(false);
    expect(() => buildRequest('teams' as WebhookFormat, message(), CTX)).toThrow(/unknown webhook format "teams": expected one of native, slack/);
  });

  for (const format of WEBHOOK_FORMATS) {
    it.each(MESSAGES)(`${format}: builds a %s message as JSON a receiver can decode`, (_name, msg) => {
      const built = buildRequest(format, msg, CTX);
      expect(() => new URL(built.url)).not.toThrow();
      expect(() => JSON.parse(built.body)).not.toThrow();
      expect(hasLoneSurrogate(built.body)).toBe(false);
      // Bounded, except native, which is the message itself.
      if (format !== 'native') expect(Buffer.byteLength(built.body)).toBeLessThan(64 * 1024);
    });
  }
});
