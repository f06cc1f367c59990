// /metrics is written by prom-client (lib/metrics, lib/queries/metrics.ts): label values are
// escaped, series of what is gone do not stay, the process's own metrics are there, and the
// registry survives being set up twice in one process (Next may load the module twice).
import { describe, expect, it, vi } from 'vitest';
import type { LeaseView } from '../../lib/domain/types';
import { metrics, metricsRegistry, renderMetrics } from '../../lib/metrics';
import { leaseSeries } from '../../lib/queries/metrics';

const lease = (id: string, over: Partial<LeaseView> = {}) =>
  ({ id, source: 'r', key: id, state: 'held', holder: 'w-1', token: '5', ttlMs: 30_000, remainingMs: 12_500, stale: false, lastMarginMs: 2_000, recentTransitions: 1, ...over }) as LeaseView;

const text = (registry = metricsRegistry()) => registry.metrics();

describe('/metrics with prom-client', () => {
  it('escapes a label value with a quote, a backslash and a newline', async () => {
    const hostile = 'a"b\\c\nd';
    metrics.set('leasehold_source_up', { source: hostile }, 1);
    expect(await renderMetrics()).toContain(String.raw`leasehold_source_up{source="a\"b\\c\nd"} 1`);
    const perLease = await text(leaseSeries([lease(hostile, { holder: hostile })], 1, 10));
    expect(perLease).toContain(String.raw`leasehold_lease_holder_info{holder="a\"b\\c\nd",lease="a\"b\\c\nd",source="r",state="held"} 1`);
    expect(perLease).toContain(String.raw`leasehold_lease_token{lease="a\"b\\c\nd",source="r"} 5`);
    // No raw newline inside a series: every line is a comment, blank, or one whole sample.
    for (const line of perLease.split('\n')) expect(line).toMatch(/^(#.*|[a-z_]+(\{.*\})? \S+)?$/);
  });

  it('keeps no series of a lease that is gone, nor of a gauge series cleared', async () => {
    const before = await text(leaseSeries([lease('r/a'), lease('r/gone')], 2, 10));
    expect(before).toContain('leasehold_lease_ttl_seconds{lease="r/gone",source="r"} 30');
    const after = await text(leaseSeries([lease('r/a')], 1, 10));
    expect(after).toContain('leasehold_lease_ttl_seconds{lease="r/a",source="r"} 30');
    expect(after).not.toContain('r/gone');

    metrics.set('leasehold_tracked_leases', { source: 'gone-src', state: 'held' }, 3);
    metrics.set('leasehold_tracked_leases', { source: 'kept-src', state: 'held' }, 2);
    expect(await renderMetrics()).toContain('leasehold_tracked_leases{source="gone-src",state="held"} 3');
    metrics.clear('leasehold_tracked_leases', { source: 'gone-src' });
    const cleared = await renderMetrics();
    expect(cleared).not.toContain('gone-src');
    expect(cleared).toContain('leasehold_tracked_leases{source="kept-src",state="held"} 2');
  });

  it('writes the per-lease series as before: limit, omitted, values in seconds, unknown values left out', async () => {
    const out = await text(leaseSeries([lease('r/a'), lease('r/free', { state: 'free', holder: null, token: null, remainingMs: null, recentTransitions: null })], 5, 2));
    expect(out).toMatch(/^leasehold_lease_series_limit 2$/m);
    expect(out).toMatch(/^leasehold_lease_series_omitted 3$/m);
    expect(out).toContain('leasehold_lease_remaining_seconds{lease="r/a",source="r"} 12.5');
    expect(out).toContain('leasehold_lease_renewal_margin_seconds{lease="r/a",source="r"} 2');
    expect(out).toContain('leasehold_lease_holder_info{holder="",lease="r/free",source="r",state="free"} 1');
    expect(out).toContain('leasehold_lease_changes_of_hands_last_hour{lease="r/free",source="r"} 0');
    expect(out).not.toMatch(/leasehold_lease_(token|remaining_seconds|renewal_margin_seconds)\{lease="r\/free"/);
  });

  it('has the same metric names and types as before, labels sorted by name, and the process metrics', async () => {
    metrics.set('leasehold_source_owned', { source: 's', collector: 'c' }, 1);
    metrics.observe('leasehold_poll_duration_seconds', { source: 's' }, 0.03);
    const out = await renderMetrics();
    const types = Object.fromEntries([...out.matchAll(/^# TYPE (leasehold_\S+) (\S+)$/gm)].map(([, name, type]) => [name, type]));
    expect(types).toEqual({
      leasehold_source_up: 'gauge',
      leasehold_source_owned: 'gauge',
      leasehold_tracked_leases: 'gauge',
      leasehold_write_queue_rows: 'gauge',
      leasehold_stream_clients: 'gauge',
      leasehold_events_total: 'counter',
      leasehold_renewals_total: 'counter',
      leasehold_read_failures_total: 'counter',
      leasehold_store_write_failures_total: 'counter',
      leasehold_store_refused_leases_total: 'counter',
      leasehold_stream_dropped_total: 'counter',
      leasehold_stream_rejected_total: 'counter',
      leasehold_alerts_total: 'counter',
      leasehold_deadline_reads_total: 'counter',
      leasehold_webhook_attempts_total: 'counter',
      leasehold_alert_write_failures_total: 'counter',
      leasehold_retention_removed_total: 'counter',
      leasehold_retention_runs_total: 'counter',
      leasehold_canary_calls_total: 'counter',
      leasehold_poll_duration_seconds: 'histogram',
      leasehold_canary_renew_seconds: 'histogram',
    });
    expect(out).toContain('leasehold_source_owned{collector="c",source="s"} 1');
    expect(out).toContain('leasehold_poll_duration_seconds_bucket{le="0.05",source="s"} 1');
    expect(out).toContain('leasehold_poll_duration_seconds_bucket{le="10",source="s"} 1');
    expect(out).toMatch(/^process_cpu_user_seconds_total \d/m);
    expect(out).toMatch(/^nodejs_heap_size_total_bytes \d/m);
  });

  it('sets the registry up once per process, even when the module is loaded twice', async () => {
    const first = metricsRegistry();
    vi.resetModules();
    const again = await import('../../lib/metrics');
    expect(() => again.metricsRegistry()).not.toThrow();
    expect(again.metricsRegistry()).toBe(first);
    const out = await again.renderMetrics();
    expect(out.match(/^# TYPE process_cpu_user_seconds_total /gm)).toHaveLength(1);
  });
});
