// Alert rules, evaluated (docs/alerts.md). Pure: fed, in order, by the transitions the
// collector already produces (a lease's changes, its renewals, its picture after a read, a
// source going down or up, a forced action) and by ticks of the observer's monotonic clock; it
// answers with decisions: raise an alert for a rule and subject, or clear it. Each rule type's
// evaluation is its module's (registry.ts), with the state it needs; this keeps which alerts it
// raised, for clears. The store is the truth of which alerts are open (it raises at most one per
// rule and subject, and resolves event alerts after their hold time by itself).
import type { AlertRuleType } from '../alert-types';
import { armedParams, covers, type AlertRuleModule, type Armed, type ParamsSchema, type RaiseOptions, type RuleActs, type RuleHooks } from './define';
import { NO_FACTS, subjectId, type AlertDecision, type AlertInput, type AlertRule, type AlertSubject } from './model';
import { ALERT_RULE_REGISTRY, type AlertRuleRegistry } from './registry';

type Params = Record<string, number | boolean>;
type Running = { ruleModule: AlertRuleModule<string, ParamsSchema>; hooks: RuleHooks<Params>; acts: RuleActs<Params>; rules: Armed<Params>[] };

const openKey = (rule: AlertRule<string>, subject: AlertSubject) => `${rule.id}\n${subjectId(subject)}`;

export class AlertEvaluator<T extends string = AlertRuleType> {
  private readonly registry: AlertRuleRegistry<T>;
  private readonly running: Running[];
  /** Alerts this evaluator raised and has not cleared (the store may have resolved event alerts since). */
  private readonly open = new Set<string>();
  /** Where the call being answered collects its decisions. */
  private out: AlertDecision<T>[] = [];

  /** `registry`: the rules known (default: Leasehold's); a rule of a type it does not list is not evaluated. */
  constructor(rules: readonly AlertRule<T>[], registry?: AlertRuleRegistry<T>) {
    this.registry = registry ?? (ALERT_RULE_REGISTRY as unknown as AlertRuleRegistry<T>);
    this.running = this.registry.modules.map((ruleModule) => this.start(ruleModule));
    this.setRules(rules);
  }

  setRules(rules: readonly AlertRule<T>[]): void {
    for (const running of this.running) running.rules = [];
    for (const rule of rules) {
      if (!rule.enabled) continue;
      const running = this.running.find((r) => r.ruleModule.type === rule.type);
      running?.rules.push({ rule, params: armedParams(running.ruleModule.defaults as Params, rule.params) });
    }
  }

  /** Alerts known open in the store (at start, or when a source is taken over): clears are sent for them. */
  adoptOpen(rule: AlertRule<T>, subject: AlertSubject): void {
    this.open.add(openKey(rule, subject));
  }

  /** Forgets a source's leases (it is observed elsewhere now). */
  forgetSource(source: string): void {
    for (const { hooks } of this.running) hooks.forget?.(source);
  }

  apply(input: AlertInput, nowMono: number): AlertDecision<T>[] {
    return this.collect((r) => r.hooks.on?.(input, nowMono, r.acts));
  }

  /** The time-based rules: a source down, an election leaderless, a holder holding, for long enough; flapping that calmed down. */
  tick(nowMono: number): AlertDecision<T>[] {
    return this.collect((r) => r.hooks.tick?.(nowMono, r.acts));
  }

  private collect(step: (running: Running) => void): AlertDecision<T>[] {
    const out: AlertDecision<T>[] = [];
    this.out = out;
    try {
      for (const running of this.running) step(running);
    } finally {
      this.out = [];
    }
    return out;
  }

  private start(ruleModule: AlertRuleModule<string, ParamsSchema>): Running {
    const running = { ruleModule, hooks: ruleModule.evaluation() as RuleHooks<Params>, rules: [] } as unknown as Running;
    running.acts = {
      get rules() {
        return running.rules;
      },
      covering: (lease) => running.rules.filter(({ rule }) => covers(rule, lease)),
      raise: (rule, subject, options) => this.raise(rule as AlertRule<T>, subject, options),
      clear: (rule, subject, why) => this.clear(rule as AlertRule<T>, subject, why),
      clearAll: (subject, why) => {
        for (const { rule } of running.rules) this.clear(rule as AlertRule<T>, subject, why);
      },
    };
    return running;
  }

  private raise(rule: AlertRule<T>, subject: AlertSubject, options: RaiseOptions) {
    const key = openKey(rule, subject);
    if (options.once && this.open.has(key)) return;
    this.open.add(key);
    const facts = { ...NO_FACTS, ...options.facts };
    this.out.push({ op: 'raise', rule, subject, severity: options.severity ?? rule.severity, summary: options.summary, facts, resolveAfterMs: options.resolveAfterMs ?? null });
  }

  private clear(rule: AlertRule<T>, subject: AlertSubject, why: string) {
    if (this.open.delete(openKey(rule, subject))) this.out.push({ op: 'clear', rule, subject, why });
  }
}
