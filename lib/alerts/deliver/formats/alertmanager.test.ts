import { describe, expect, it } from 'vitest';
import { alertmanagerAlertsUrl, buildAlertmanager } from './alertmanager';
import { LABEL_VALUE_MAX } from './alertmanager-labels';
import { CTX, FINGERPRINT, hasLoneSurrogate, hostile, message, resolved } from './test-fixtures';

const AM = { ...CTX, endpointUrl: 'http://127.0.0.1:19093' };
const build = (msg = message(), ctx = AM) => JSON.parse(buildAlertmanager(msg, ctx).body);

describe('alertmanager format (POST /api/v2/alerts)', () => {
  it.each([
    ['http://am:9093', 'http://am:9093/api/v2/alerts'],
    ['http://am:9093/', 'http://am:9093/api/v2/alerts'],
    ['http://am:9093/api/v2/alerts', 'http://am:9093/api/v2/alerts'],
    ['http://am:9093/api/v2/alerts/', 'http://am:9093/api/v2/alerts'],
    ['https://proxy.example/alertmanager//', 'https://proxy.example/alertmanager/api/v2/alerts'],
    ['https://proxy.example/am?tenant=a', 'https://proxy.example/am/api/v2/alerts?tenant=a'],
  ])('posts %s to %s', (endpoint, expected) => {
    expect(alertmanagerAlertsUrl(endpoint)).toBe(expected);
  });

  it('refuses an endpoint that is not a URL', () => {
    expect(() => alertmanagerAlertsUrl('alertmanager:9093')).toThrow(/Alertmanager's base URL/);
    expect(() => alertmanagerAlertsUrl('not a url')).toThrow(/Alertmanager's base URL/);
  });

  it('posts one alert that ends by itself after 4 resend intervals while firing', () => {
    const built = buildAlertmanager(message(), AM);
    expect(built.url).toBe('http://127.0.0.1:19093/api/v2/alerts');
    const alerts = JSON.parse(built.body);
    expect(alerts).toEqual([
      {
        labels: {
          alertname: 'late_renewal',
          severity: 'warning',
          rule: 'payments leader renews late',
          source: 'redis-main',
          lease: 'locks:payments',
          leasehold_fingerprint: FINGERPRINT,
        },
        annotations: expect.objectContaining({ summary: 'locks:payments was renewed with 850 ms left (payments-7f9c)', holder: 'payments-7f9c', token: '42' }),
        startsAt: '2026-03-01T12:00:00.000Z',
        endsAt: new Date(AM.now.getTime() + 4 * 300_000).toISOString(),
        generatorURL: 'https://leasehold.example/leases/redis-main%3Alocks%3Apayments',
      },
    ]);
  });

  it('resolves with the time the alert ended, under the same labels', () => {
    const firing = build(message())[0];
    const done = build(resolved({ holder: 'other' }))[0];
    expect(done.endsAt).toBe('2026-03-01T12:05:00.000Z');
    expect(done.labels).toEqual(firing.labels);
  });

  it('never sends an end before the start (Alertmanager refuses that)', () => {
    expect(build(resolved({ startsAt: '2026-03-01T12:10:00.000Z', endsAt: '2026-03-01T12:05:00.000Z' }))[0].endsAt).toBe('2026-03-01T12:10:00.000Z');
    expect(build(resolved({ endsAt: null }))[0].endsAt).toBe(AM.now.toISOString());
  });

  it('sends no generatorURL that is not absolute, and marks tests', () => {
    const alert = build(message({}, 'alert.test', '/leases/x'))[0];
    expect(alert.generatorURL).toBeUndefined();
    expect(alert.labels.leasehold_test).toBe('true');
  });

  it('refuses a resend interval that would end the alert at once', () => {
    expect(() => buildAlertmanager(message(), { ...AM, resendIntervalMs: 0 })).toThrow(/positive resend interval/);
  });

  it('keeps hostile label values within 1024 characters and valid UTF-8', () => {
    const body = buildAlertmanager(hostile(), AM).body;
    expect(hasLoneSurrogate(body)).toBe(false);
    const [alert] = JSON.parse(body);
    for (const set of [alert.labels, alert.annotations]) {
      for (const value of Object.values(set as Record<string, string>)) {
        expect(value.length).toBeGreaterThan(0);
        expect(value.length).toBeLessThanOrEqual(LABEL_VALUE_MAX);
        expect(Buffer.from(value, 'utf8').toString('utf8')).toBe(value);
      }
    }
    expect(alert.labels.lease).toMatch(/…$/);
    // A link over 3000 characters is left out rather than sent.
    expect(alert.generatorURL).toBeUndefined();
  });
});
