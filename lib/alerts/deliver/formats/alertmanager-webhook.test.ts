import { describe, expect, it } from 'vitest';
import { LABEL_VALUE_MAX } from './alertmanager-labels';
import { buildAlertmanagerWebhook, GO_ZERO_TIME } from './alertmanager-webhook';
import { CTX, FINGERPRINT, hasLoneSurrogate, hostile, message, resolved } from './test-fixtures';

const build = (msg = message()) => JSON.parse(buildAlertmanagerWebhook(msg, CTX).body);

describe('alertmanager-webhook format (webhook receiver payload, version 4)', () => {
  it('is one group of one firing alert, with Go’s zero time as its endsAt', () => {
    const built = buildAlertmanagerWebhook(message(), CTX);
    expect(built.url).toBe(CTX.endpointUrl);
    const labels = {
      alertname: 'late_renewal',
      severity: 'warning',
      rule: 'payments leader renews late',
      source: 'redis-main',
      lease: 'locks:payments',
      leasehold_fingerprint: FINGERPRINT,
    };
    expect(JSON.parse(built.body)).toEqual({
      version: '4',
      groupKey:
        '{}:{alertname="late_renewal", lease="locks:payments", leasehold_fingerprint="0123456789abcdef0123456789abcdef", rule="payments leader renews late", severity="warning", source="redis-main"}',
      truncatedAlerts: 0,
      status: 'firing',
      receiver: 'ops',
      groupLabels: labels,
      commonLabels: labels,
      commonAnnotations: expect.objectContaining({ summary: 'locks:payments was renewed with 850 ms left (payments-7f9c)', holder: 'payments-7f9c', token: '42' }),
      externalURL: 'https://leasehold.example',
      alerts: [
        {
          status: 'firing',
          labels,
          annotations: expect.objectContaining({ margin: '850 ms', previous_token: '41', link: 'https://leasehold.example/leases/redis-main%3Alocks%3Apayments' }),
          startsAt: '2026-03-01T12:00:00.000Z',
          endsAt: GO_ZERO_TIME,
          generatorURL: 'https://leasehold.example/leases/redis-main%3Alocks%3Apayments',
          fingerprint: FINGERPRINT,
        },
      ],
    });
    expect(GO_ZERO_TIME).toBe('0001-01-01T00:00:00Z');
  });

  it('resolves the same alert: same labels and group key, endsAt when it ended', () => {
    const firing = build(message());
    const done = build(resolved({ holder: 'someone-else', token: '43' }));
    expect(done.status).toBe('resolved');
    expect(done.alerts[0].status).toBe('resolved');
    expect(done.alerts[0].endsAt).toBe('2026-03-01T12:05:00.000Z');
    expect(done.alerts[0].labels).toEqual(firing.alerts[0].labels);
    expect(done.groupKey).toBe(firing.groupKey);
    expect(done.alerts[0].annotations.holder).toBe('someone-else');
  });

  it('leaves out labels that have no value (source_down has no lease) and marks tests', () => {
    const built = build(message({ leaseId: null, leaseKey: null, holder: null, token: null, rule: { id: 'r', name: 'redis down', type: 'source_down' } }, 'alert.test', null));
    expect(built.alerts[0].labels).toEqual({ alertname: 'source_down', severity: 'warning', rule: 'redis down', source: 'redis-main', leasehold_fingerprint: FINGERPRINT, leasehold_test: 'true' });
    expect(built.alerts[0].annotations.holder).toBeUndefined();
    expect(built.externalURL).toBe('');
    expect(built.alerts[0].generatorURL).toBe('');
  });

  it('keeps hostile label and annotation values bounded, non-empty and encodable', () => {
    const body = buildAlertmanagerWebhook(hostile(), CTX).body;
    expect(hasLoneSurrogate(body)).toBe(false);
    const alert = JSON.parse(body).alerts[0];
    for (const set of [alert.labels, alert.annotations]) {
      for (const [name, value] of Object.entries(set as Record<string, string>)) {
        expect(typeof value, name).toBe('string');
        expect(value.length, name).toBeGreaterThan(0);
        expect(value.length, name).toBeLessThanOrEqual(LABEL_VALUE_MAX);
      }
    }
    expect(alert.annotations.token).toBe('1180591620717411303424');
  });
});
