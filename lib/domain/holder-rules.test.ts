// split_brain and late_holder: holders' claims and lateness judged against the backend's view.
import { describe, expect, it } from 'vitest';
import { AlertEvaluator, type AlertDecision, type AlertInput, type AlertRule, type LeaseFacts } from './alert-rules';
import { claimConflict } from './alert-rules/split-brain';
import type { AlertRuleType } from './alert-types';

const rule = (type: AlertRuleType, params: AlertRule['params'] = {}): AlertRule => ({ id: `r-${type}`, name: type, type, severity: 'critical', scope: { kind: 'all' }, params, enabled: true });
const lease = (over: Partial<LeaseFacts> = {}): LeaseFacts => ({
  id: 'pg/leases/scheduler',
  source: 'pg',
  key: 'leases/scheduler',
  kind: 'election',
  state: 'held',
  stale: false,
  holder: 'server-02:b2',
  lastHolder: 'server-01:a1',
  token: '8',
  lastToken: '7',
  ttlMs: 6_000,
  candidates: 3,
  ...over,
});
const claim = (holder: string, token: string | null, untilMono: number | null, over: Partial<Extract<AlertInput, { type: 'claim' }>> = {}): AlertInput => ({
  type: 'claim',
  lease: lease(),
  holder,
  token,
  claims: untilMono !== null,
  claimsSinceMono: null,
  claimUntilMono: untilMono,
  lateMaxMs: null,
  ttlMs: null,
  ...over,
});
const ops = (decisions: AlertDecision[]) => decisions.map((d) => `${d.op} ${d.rule.type}`);

describe('split_brain', () => {
  it('fires when a holder goes on claiming a lease the backend shows another holding, past the grace, naming both; resolves when the claim ends', () => {
    const e = new AlertEvaluator([rule('split_brain')]);
    expect(e.apply(claim('server-01:a1', '7', 10_000), 1_000)).toEqual([]);
    expect(e.tick(1_000)).toEqual([]); // the conflict starts here
    expect(e.tick(1_900)).toEqual([]); // within the 1 s grace
    const raised = e.tick(2_000);
    expect(ops(raised)).toEqual(['raise split_brain']);
    expect(raised[0]).toMatchObject({
      severity: 'critical',
      facts: { holder: 'server-01:a1', token: '7', previousHolder: 'server-02:b2', previousToken: '8', detail: { backend: { state: 'held', holder: 'server-02:b2', token: '8' } } },
    });
    expect(raised[0]!.op === 'raise' && raised[0]!.summary).toMatch(/server-01:a1 \(token 7\) claims it while the backend shows server-02:b2 holding it with token 8/);
    expect(e.tick(3_000)).toEqual([]); // raised once
    expect(e.apply(claim('server-01:a1', '7', null), 3_500)).toEqual([]);
    expect(ops(e.tick(4_000))).toEqual(['clear split_brain']);
  });

  it('a claim that has stood since before the hand-over is raised at once: a zombie reporting on waking conflicts since the backend gave the lease away', () => {
    const e = new AlertEvaluator([rule('split_brain')]);
    const handedOver = lease({ viewSinceMono: 2_000 });
    e.apply(claim('server-01:a1', '7', 20_000, { lease: handedOver, claimsSinceMono: 0 }), 9_000);
    const raised = e.tick(9_000);
    expect(ops(raised)).toEqual(['raise split_brain']);
    expect(raised[0]!.op === 'raise' && raised[0]!.summary).toMatch(/split brain for 7000 ms/);
    // A hand-over a moment ago: the grace still runs, whatever the claim's age.
    const f = new AlertEvaluator([rule('split_brain')]);
    f.apply(claim('server-01:a1', '7', 20_000, { lease: lease({ viewSinceMono: 8_900 }), claimsSinceMono: 0 }), 9_000);
    expect(f.tick(9_000)).toEqual([]);
    expect(ops(f.tick(9_900))).toEqual(['raise split_brain']);
  });

  it('resolves by itself when a claim runs out (claimForMs), and does not fire for a claim shorter than the grace', () => {
    const e = new AlertEvaluator([rule('split_brain')]);
    e.apply(claim('server-01:a1', '7', 1_500), 1_000);
    expect([...e.tick(1_000), ...e.tick(1_600), ...e.tick(2_100)]).toEqual([]);
    e.apply(claim('server-01:a1', '7', 20_000), 3_000);
    e.tick(3_000);
    expect(ops(e.tick(4_000))).toEqual(['raise split_brain']);
    expect(ops(e.tick(20_000))).toEqual(['clear split_brain']);
  });

  it('says nothing while the claimant is the holder the backend shows, with its token', () => {
    const e = new AlertEvaluator([rule('split_brain')]);
    e.apply(claim('server-02:b2', '8', 60_000), 0);
    expect([0, 1_000, 2_000, 5_000].flatMap((t) => e.tick(t))).toEqual([]);
  });

  it('fires for two holders claiming at once, and for a claim on an expired or free lease, or under an older token', () => {
    const both = claimConflict(lease(), [
      { holder: 'server-02:b2', token: '8', sinceMono: 0, untilMono: 9 },
      { holder: 'server-01:a1', token: '7', sinceMono: 0, untilMono: 9 },
    ]);
    expect(both?.why).toBe('server-01:a1 (token 7) claims it while the backend shows server-02:b2 holding it with token 8; 2 holders claim it at once');
    expect(both?.claims.map((c) => c.holder)).toEqual(['server-01:a1', 'server-02:b2']);
    const neither = claimConflict(lease({ state: 'expired', holder: null, token: null }), [
      { holder: 'server-02:b2', token: '8', sinceMono: 0, untilMono: 9 },
      { holder: 'server-01:a1', token: '7', sinceMono: 0, untilMono: 9 },
    ]);
    expect(neither?.why).toBe('server-02:b2 (token 8) and server-01:a1 (token 7) claim it while the backend shows it expired; 2 holders claim it at once');
    expect(claimConflict(lease({ state: 'expired', holder: null, token: null }), [{ holder: 'server-02:b2', token: '8', sinceMono: 0, untilMono: 9 }])?.why).toMatch(/shows it expired/);
    expect(claimConflict(lease({ state: 'free', holder: null, token: null }), [{ holder: 'server-02:b2', token: '8', sinceMono: 0, untilMono: 9 }])?.why).toMatch(/shows it free/);
    // The same holder name under an older grant: another instance, or a zombie of itself.
    expect(claimConflict(lease(), [{ holder: 'server-02:b2', token: '6', sinceMono: 0, untilMono: 9 }])?.why).toMatch(/token 6\) claims it while/);
    expect(claimConflict(lease(), [{ holder: 'server-02:b2', token: null, sinceMono: 0, untilMono: 9 }])).toBeNull();
  });

  it('does not judge a stale lease, nor one in a shape Leasehold cannot read: neither raised nor cleared', () => {
    const e = new AlertEvaluator([rule('split_brain')]);
    e.apply(claim('server-01:a1', '7', 60_000), 0);
    e.tick(0);
    expect(ops(e.tick(1_000))).toEqual(['raise split_brain']);
    e.apply({ type: 'seen', lease: lease({ stale: true }) }, 1_500);
    expect([...e.tick(2_000), ...e.tick(30_000)]).toEqual([]);
    expect(claimConflict(lease({ state: 'unknown' }), [{ holder: 'x', token: null, sinceMono: 0, untilMono: 9 }])).toBeNull();
  });

  it('follows the backend: the claimant taking the lease back clears it', () => {
    const e = new AlertEvaluator([rule('split_brain', { graceMs: 0 })]);
    e.apply(claim('server-01:a1', '9', 60_000), 0);
    expect(ops(e.tick(0))).toEqual(['raise split_brain']);
    e.apply({ type: 'seen', lease: lease({ holder: 'server-01:a1', token: '9' }) }, 500);
    expect(ops(e.tick(1_000))).toEqual(['clear split_brain']);
  });
});

describe('late_holder', () => {
  it('fires above 30 % of the TTL late, names the holder, and clears when every late holder is in time again', () => {
    const e = new AlertEvaluator([rule('late_holder')]);
    expect(e.apply(claim('server-02:b2', '8', 60_000, { lateMaxMs: 1_800 }), 0)).toEqual([]); // exactly 30 %
    const raised = e.apply(claim('server-02:b2', '8', 60_000, { lateMaxMs: 2_400 }), 1);
    expect(ops(raised)).toEqual(['raise late_holder']);
    expect(raised[0]!.op === 'raise' && raised[0]!.summary).toMatch(/server-02:b2 renewed 2400 ms late against its own schedule \(40 % of the 6000 ms TTL\)/);
    expect(ops(e.apply(claim('server-03:c3', null, null, { lateMaxMs: 2_000 }), 2))).toEqual(['raise late_holder']);
    expect(e.apply(claim('server-02:b2', '8', 60_000, { lateMaxMs: 10 }), 3)).toEqual([]); // server-03 is still late
    expect(ops(e.apply(claim('server-03:c3', null, null, { lateMaxMs: 0 }), 4))).toEqual(['clear late_holder']);
  });

  it("measures against the TTL the holder asked for when the backend does not keep one (a Redis key)", () => {
    const e = new AlertEvaluator([rule('late_holder')]);
    expect(ops(e.apply(claim('w:1', '3', 60_000, { lease: lease({ ttlMs: null }), ttlMs: 10_000, lateMaxMs: 3_500 }), 0))).toEqual(['raise late_holder']);
    expect(ops(e.apply(claim('w:1', '3', 60_000, { lease: lease({ ttlMs: null }), ttlMs: 10_000, lateMaxMs: 2_500 }), 1))).toEqual(['clear late_holder']);
  });

  it('judges nothing without lateness or a TTL', () => {
    const e = new AlertEvaluator([rule('late_holder')]);
    expect(e.apply(claim('server-02:b2', '8', 60_000), 0)).toEqual([]);
    expect(e.apply(claim('server-02:b2', '8', 60_000, { lease: lease({ ttlMs: null }), lateMaxMs: 99_000 }), 0)).toEqual([]);
  });
});
