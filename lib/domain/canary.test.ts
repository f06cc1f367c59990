import { describe, expect, it } from 'vitest';
import { AlertEvaluator, type AlertDecision, type AlertInput, type AlertRule } from './alert-rules';
import { addRoundTrip, bucketOf, bucketUpperMs, emptyRollup, exactQuantile, mergeRollups, quantileOf, RecentRoundTrips, windowStats } from './canary-stats';

const rule = (over: Partial<AlertRule> = {}): AlertRule => ({ id: 'r-slow', name: 'slow', type: 'slow_renewals', severity: 'warning', scope: { kind: 'all' }, params: {}, enabled: true, ...over });
const canary = (over: Partial<Extract<AlertInput, { type: 'canary' }>> = {}): AlertInput => ({ type: 'canary', source: 'redis', key: 'lh:canary', call: 'renew', rttMs: 2, ok: true, outcome: 'ok', p99Ms: 3, ttlMs: 1_000, ...over });
const ops = (decisions: AlertDecision[]) => decisions.map((d) => `${d.op} ${d.rule.type} ${d.subject.leaseId ?? d.subject.source}`);

describe('canary round trips', () => {
  it('buckets round trips 16 to a doubling, and reads a percentile at most 4.4 % above the exact one, never below, never above the max', () => {
    for (const ms of [0.05, 0.7, 1, 1.23, 17, 250, 999, 5_000]) {
      const upper = bucketUpperMs(bucketOf(ms));
      expect(upper).toBeGreaterThanOrEqual(ms);
      expect(upper).toBeLessThanOrEqual(ms * 2 ** (1 / 16) + 1e-9);
    }
    const rollup = emptyRollup();
    const values = Array.from({ length: 1000 }, (_, i) => 1 + i / 10); // 1 ms .. 100.9 ms
    for (const v of values) addRoundTrip(rollup, v, true);
    for (const q of [0.5, 0.95, 0.99]) {
      const exact = exactQuantile(values, q)!;
      const read = quantileOf(rollup, q)!;
      expect(read).toBeGreaterThanOrEqual(exact - 0.01);
      expect(read).toBeLessThanOrEqual(exact * 1.045);
    }
    expect(quantileOf(rollup, 1)).toBe(100.9);
  });

  it('adds minutes up, counts failures, and leaves out what the store holds that is not a count', () => {
    const a = emptyRollup();
    addRoundTrip(a, 2, true);
    addRoundTrip(a, 800, false);
    const b = { ...emptyRollup(), count: 1, sumMs: 3, maxMs: 3, buckets: { [String(bucketOf(3))]: 1, junk: 5, '7': -1, '8': 1.5 } };
    const sum = mergeRollups([a, b]);
    expect(windowStats(sum)).toEqual({ count: 3, failed: 1, p50Ms: quantileOf(sum, 0.5), p95Ms: 800, p99Ms: 800, maxMs: 800 });
    expect(Object.keys(sum.buckets).sort()).toEqual([String(bucketOf(2)), String(bucketOf(3)), String(bucketOf(800))].sort());
    expect(windowStats(emptyRollup())).toEqual({ count: 0, failed: 0, p50Ms: null, p95Ms: null, p99Ms: null, maxMs: null });
  });

  it("keeps the last minute's round trips exactly, for the rule's p99", () => {
    const recent = new RecentRoundTrips(60_000);
    recent.add(0, 500);
    for (let i = 1; i <= 99; i++) recent.add(i * 100, 2);
    expect(recent.p99(10_000)).toBe(2);
    recent.add(10_100, 400);
    expect(recent.p99(10_100)).toBe(400);
    expect(recent.p99(70_050)).toBe(400);
    expect(recent.p99(200_000)).toBeNull();
  });
});

describe('slow_renewals', () => {
  it("fires when the canary's renewal p99 is above 25 % of its TTL, and clears once it is back under", () => {
    const e = new AlertEvaluator([rule()]);
    expect(e.apply(canary({ p99Ms: 250 }), 0)).toEqual([]);
    const raised = e.apply(canary({ rttMs: 310, p99Ms: 310 }), 1);
    expect(ops(raised)).toEqual(['raise slow_renewals redis']);
    expect(raised[0]).toMatchObject({ subject: { source: 'redis', leaseId: null }, facts: { ttlMs: 1_000, detail: { p99Ms: 310, thresholdMs: 250, key: 'lh:canary' } } });
    expect((raised[0] as { summary: string }).summary).toBe("source redis: its canary's renewals took 310 ms at p99 over the last minute, above 250 ms (canary TTL 1000 ms)");
    // Raised once while it lasts.
    expect(e.apply(canary({ p99Ms: 400 }), 2)).toEqual([]);
    expect(ops(e.apply(canary({ p99Ms: 120 }), 3))).toEqual(['clear slow_renewals redis']);
  });

  it('fires on a renewal that fails, whatever the p99, and reads only renewals', () => {
    const e = new AlertEvaluator([rule({ params: { ttlPercent: 50 } })]);
    expect(e.apply(canary({ call: 'acquire', ok: false, outcome: 'unavailable', p99Ms: 900 }), 0)).toEqual([]);
    expect(e.apply(canary({ call: 'release', rttMs: 990, p99Ms: 990 }), 0)).toEqual([]);
    expect(e.apply(canary({ p99Ms: 480 }), 0)).toEqual([]);
    const lost = e.apply(canary({ ok: false, outcome: 'lost', rttMs: 1.5, p99Ms: 3 }), 1);
    expect((lost[0] as { summary: string }).summary).toBe('source redis: a renewal of its canary found the lease gone after 2 ms (canary TTL 1000 ms)');
    const e2 = new AlertEvaluator([rule()]);
    expect((e2.apply(canary({ ok: false, outcome: 'unavailable', rttMs: 1_000, p99Ms: 1_000 }), 0)[0] as { summary: string }).summary).toMatch(/got no answer after 1000 ms/);
  });

  it("keeps to its scope's sources, and leaves a disabled rule out", () => {
    const e = new AlertEvaluator([rule({ scope: { kind: 'source', source: 'etcd' } }), rule({ id: 'r-off', enabled: false })]);
    expect(e.apply(canary({ p99Ms: 900 }), 0)).toEqual([]);
    expect(ops(e.apply(canary({ source: 'etcd', p99Ms: 900 }), 0))).toEqual(['raise slow_renewals etcd']);
  });
});
