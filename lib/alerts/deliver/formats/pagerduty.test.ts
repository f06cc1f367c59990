import { describe, expect, it } from 'vitest';
import { buildPagerDuty } from './pagerduty';
import { CTX, FINGERPRINT, hasLoneSurrogate, hostile, message, resolved } from './test-fixtures';

const PD = { ...CTX, endpointUrl: 'https://events.pagerduty.com/v2/enqueue' };
const build = (msg = message(), ctx = PD) => JSON.parse(buildPagerDuty(msg, ctx).body);

describe('pagerduty format (Events API v2)', () => {
  it('triggers with the fingerprint as dedup_key, to the endpoint URL', () => {
    const built = buildPagerDuty(message(), PD);
    expect(built.url).toBe('https://events.pagerduty.com/v2/enqueue');
    const event = JSON.parse(built.body);
    expect(event).toMatchObject({
      routing_key: PD.routingKey,
      event_action: 'trigger',
      dedup_key: FINGERPRINT,
      payload: {
        summary: 'locks:payments was renewed with 850 ms left (payments-7f9c)',
        source: 'redis-main',
        severity: 'warning',
        timestamp: '2026-03-01T12:00:00.000Z',
        component: 'locks:payments',
        group: 'redis-main',
        class: 'late_renewal',
      },
      client: 'Leasehold',
      client_url: 'https://leasehold.example/leases/redis-main%3Alocks%3Apayments',
      links: [{ href: 'https://leasehold.example/leases/redis-main%3Alocks%3Apayments', text: 'Open in Leasehold' }],
    });
    expect(event.payload.custom_details).toMatchObject({ holder: 'payments-7f9c', token: '42', previous_token: '41', margin_ms: 850, gap_ms: null, rule: 'payments leader renews late' });
  });

  it('resolves with the same dedup_key', () => {
    expect(build(resolved())).toEqual({ routing_key: PD.routingKey, event_action: 'resolve', dedup_key: FINGERPRINT });
  });

  it.each([
    ['critical', 'critical'],
    ['warning', 'warning'],
    ['info', 'info'],
  ] as const)('maps severity %s to %s', (severity, expected) => {
    expect(build(message({ severity })).payload.severity).toBe(expected);
  });

  it('refuses clearly without a routing key', () => {
    expect(() => buildPagerDuty(message(), { ...PD, routingKey: null })).toThrow(/pagerduty format needs a routing key.*"ops"/);
    expect(() => buildPagerDuty(message(), { ...PD, routingKey: '  ' })).toThrow(/routing key/);
  });

  it('marks a test, and leaves out links that are not absolute', () => {
    const event = build(message({}, 'alert.test', '/leases/x'));
    expect(event.payload.summary).toMatch(/^\[test\] /);
    expect(event.payload.custom_details.test).toBe(true);
    expect(event.links).toBeUndefined();
    expect(event.client_url).toBeUndefined();
  });

  it('keeps hostile input within PagerDuty limits', () => {
    const body = buildPagerDuty(hostile(), PD).body;
    const event = JSON.parse(body);
    expect(hasLoneSurrogate(body)).toBe(false);
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(512_000);
    expect(event.payload.summary.length).toBeLessThanOrEqual(1024);
    expect(event.dedup_key.length).toBeLessThanOrEqual(255);
    expect(event.payload.source.length).toBeLessThanOrEqual(255);
    expect(event.payload.component.length).toBeLessThanOrEqual(255);
    expect(event.payload.custom_details.token).toBe('1180591620717411303424');
    expect(event.payload.custom_details.lease.length).toBeLessThanOrEqual(1024);
    expect(event.payload.custom_details.detail).toMatch(/left out/);
    // eslint-disable-next-line no-control-regex -- checking that none is left
    expect(event.payload.custom_details.holder).not.toMatch(/[\u0000-\u001f]/);
  });

  it('keeps a small detail and leaves out a large one', () => {
    expect(build(message({ detail: { reads: 3, instance: 'r1' } })).payload.custom_details.detail).toEqual({ reads: 3, instance: 'r1' });
    expect(build(message({ detail: { dump: 'v'.repeat(20_000) } })).payload.custom_details.detail).toMatch(/^\(\d+ characters of detail left out/);
  });
});
