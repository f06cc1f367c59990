// Adding an alert rule touches its module and the list, nothing else (issue 25, point 3). The
// toy rule below is written here as a module of its own and added to the list the registry is
// built from; the API's bodies and the evaluator take it from there, as they take the real ones.
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { ruleBodies, newRuleBody } from '../../lib/alerts/rule-bodies';
import { ALERT_RULES, ALERT_RULE_REGISTRY, AlertEvaluator, alertRuleRegistry, defineAlertRule, leaseSubject, param, type AlertRule, type LeaseFacts } from '../../lib/domain/alert-rules';
import { ALERT_RULE_TYPES } from '../../lib/domain/alert-types';

// ---- the toy rule's module: an election crowded with more than maxCandidates for afterMs.
const crowdedElection = defineAlertRule({
  type: 'crowded_election',
  severity: 'info',
  describe: 'an election with more than maxCandidates candidates for longer than afterMs',
  params: z.strictObject({
    maxCandidates: param.count({ label: 'Fires above this many candidates', words: 'more than {} candidates', min: 1, max: 100, default: 5 }),
    afterMs: param.duration({ label: 'After (duration)', words: 'for longer than {}', max: 86_400_000, default: 10_000 }),
  }),
  evaluation: () => {
    const crowdedSince = new Map<string, { mono: number; lease: LeaseFacts }>();
    return {
      on(input, nowMono, act) {
        if (input.type !== 'seen' || input.lease.kind !== 'election') return;
        const { lease } = input;
        const most = Math.min(...act.rules.map(({ params }) => params.maxCandidates));
        if (lease.candidates > most) {
          if (!crowdedSince.has(lease.id)) crowdedSince.set(lease.id, { mono: nowMono, lease });
        } else crowdedSince.delete(lease.id);
        for (const { rule, params } of act.rules) if (lease.candidates <= params.maxCandidates) act.clear(rule, leaseSubject(lease), 'fewer candidates');
      },
      tick(nowMono, act) {
        for (const { mono, lease } of crowdedSince.values()) {
          for (const { rule, params } of act.covering(lease)) {
            if (lease.candidates <= params.maxCandidates || nowMono - mono < params.afterMs) continue;
            act.raise(rule, leaseSubject(lease), { summary: `${lease.id}: ${lease.candidates} candidates`, facts: { detail: { candidates: lease.candidates } }, once: true });
          }
        }
      },
    };
  },
});
// ---- the list, with it added.
const registry = alertRuleRegistry([...ALERT_RULES, crowdedElection]);

const election = (candidates: number): LeaseFacts => ({
  id: 'etcd/election/leader',
  source: 'etcd',
  key: 'election/leader',
  kind: 'election',
  state: 'held',
  stale: false,
  holder: 'a',
  lastHolder: null,
  token: '7',
  lastToken: null,
  ttlMs: 10_000,
  candidates,
});
const ops = (decisions: { op: string; rule: { type: string }; subject: { leaseId: string | null } }[]) => decisions.map((d) => `${d.op} ${d.rule.type} ${d.subject.leaseId}`);

describe('an alert rule added by its module and the list', () => {
  const { newRuleBody: body, ruleChangeBody, checkRuleParams } = ruleBodies(registry);

  it('is a type of the API: its parameters are accepted, its defaults filled in, and bad ones refused with a sentence', () => {
    expect(body.parse({ name: 'Crowded', type: 'crowded_election' })).toMatchObject({ type: 'crowded_election', params: { maxCandidates: 5, afterMs: 10_000 }, scope: { kind: 'all' }, enabled: true });
    expect(body.parse({ name: 'Crowded', type: 'crowded_election', params: { maxCandidates: 2 } }).params).toEqual({ maxCandidates: 2, afterMs: 10_000 });
    for (const params of [{ maxCandidates: 0 }, { maxCandidates: 1.5 }, { afterMs: -1 }, { afterMs: '10s' }, { marginPercent: 20 }]) {
      const parsed = body.safeParse({ name: 'Crowded', type: 'crowded_election', params });
      expect(parsed.success, JSON.stringify(params)).toBe(false);
      expect(parsed.error!.issues[0]!.path[0]).toBe('params');
    }
    // A change to a rule's parameters is checked by its type's schema.
    expect(ruleChangeBody.parse({ params: { maxCandidates: 3 } })).toEqual({ params: { maxCandidates: 3 } });
    expect(checkRuleParams('crowded_election', { maxCandidates: 3 })).toEqual({ ok: true, params: { maxCandidates: 3, afterMs: 10_000 } });
    expect(checkRuleParams('crowded_election', { maxCandidates: 1000 })).toMatchObject({ ok: false, error: expect.stringMatching(/^"params\.maxCandidates": /) });
    expect(checkRuleParams('crowded_election', { windowMs: 1000 })).toMatchObject({ ok: false, error: expect.stringMatching(/windowMs/) });
  });

  it('is unknown where it is not listed: the real list refuses it', () => {
    expect(JSON.stringify(newRuleBody.safeParse({ name: 'Crowded', type: 'crowded_election' }).error?.issues)).toContain(`expected one of ${ALERT_RULE_TYPES.join(', ')}`);
    expect(ALERT_RULE_REGISTRY.get('crowded_election')).toBeUndefined();
    expect(registry.types).toEqual([...ALERT_RULE_TYPES, 'crowded_election']);
  });

  it('is evaluated: raised on a tick after afterMs, resolved when the election thins out, beside the real rules', () => {
    const rule: AlertRule<(typeof registry.types)[number]> = { id: 'r-crowded', name: 'Crowded', type: 'crowded_election', severity: 'info', scope: { kind: 'all' }, params: { maxCandidates: 2 }, enabled: true };
    const heldTooLong: AlertRule<(typeof registry.types)[number]> = { id: 'r-held', name: 'Held', type: 'held_too_long', severity: 'warning', scope: { kind: 'all' }, params: { afterMs: 60_000 }, enabled: true };
    const e = new AlertEvaluator([rule, heldTooLong], registry);
    expect(e.apply({ type: 'seen', lease: election(3) }, 0)).toEqual([]);
    expect(e.tick(9_999)).toEqual([]);
    const raised = e.tick(10_000);
    expect(ops(raised)).toEqual(['raise crowded_election etcd/election/leader']);
    expect(raised[0]).toMatchObject({ severity: 'info', facts: { detail: { candidates: 3 }, holder: null }, resolveAfterMs: null });
    expect(e.tick(11_000)).toEqual([]); // raised once while it lasts
    expect(ops(e.apply({ type: 'seen', lease: election(2) }, 12_000))).toEqual(['clear crowded_election etcd/election/leader']);
    // The real rules run beside it, from the same list.
    expect(ops(e.tick(60_000))).toEqual(['raise held_too_long etcd/election/leader']);
  });

  it('refuses a list that names a type twice', () => {
    expect(() => alertRuleRegistry([...ALERT_RULES, crowdedElection, crowdedElection])).toThrow(/crowded_election.*twice/);
  });
});

describe('the real list', () => {
  it('keeps the types, their order, and every default as they were', () => {
    expect(ALERT_RULE_TYPES).toEqual(['missed_renewal', 'late_renewal', 'failover', 'flapping', 'leaderless', 'token_regression', 'source_down', 'held_too_long', 'force_action', 'late_holder', 'split_brain', 'slow_renewals']);
    expect(Object.fromEntries(ALERT_RULES.map((m) => [m.type, [m.severity, m.defaults]]))).toEqual({
      missed_renewal: ['critical', { resolveAfterMs: 900_000 }],
      late_renewal: ['warning', { marginPercent: 20 }],
      failover: ['warning', { resolveAfterMs: 300_000 }],
      flapping: ['warning', { changes: 3, windowMs: 600_000 }],
      leaderless: ['critical', { afterMs: 30_000, includeLocks: false }],
      token_regression: ['critical', { resolveAfterMs: 900_000 }],
      source_down: ['critical', { afterMs: 30_000 }],
      held_too_long: ['warning', { afterMs: 3_600_000 }],
      force_action: ['info', { resolveAfterMs: 300_000 }],
      late_holder: ['warning', { latePercent: 30 }],
      split_brain: ['critical', { graceMs: 1_000 }],
      slow_renewals: ['warning', { ttlPercent: 25 }],
    });
  });

  it('checks each type by its own parameters: another type\'s are refused', () => {
    expect(newRuleBody.safeParse({ name: 'r', type: 'late_renewal', params: { marginPercent: 30 } }).success).toBe(true);
    expect(newRuleBody.safeParse({ name: 'r', type: 'late_renewal', params: { afterMs: 1000 } }).success).toBe(false);
    expect(newRuleBody.safeParse({ name: 'r', type: 'flapping', params: { changes: 0 } }).success).toBe(false);
    expect(newRuleBody.safeParse({ name: 'r', type: 'leaderless', params: { includeLocks: 'yes' } }).success).toBe(false);
  });

  it('gives every parameter a label and words for the form and the rules list', () => {
    for (const ruleModule of ALERT_RULES) {
      expect(ruleModule.fields.map((f) => f.name)).toEqual(Object.keys(ruleModule.defaults));
      for (const f of ruleModule.fields) expect(f.label.length, `${ruleModule.type}.${f.name}`).toBeGreaterThan(0);
    }
  });
});
