// The list of alert rules: every rule type Leasehold knows is a module in this folder, and is
// here. The type names (AlertRuleType), the API's bodies (lib/alerts/rule-bodies.ts), the rule
// form and the evaluator all read it; nothing else lists the rules. Pure.
import type { AlertSeverity } from '../alert-types';
import type { AlertRuleModule, ParamsSchema } from './define';
import { failover } from './failover';
import { flapping } from './flapping';
import { forceAction } from './force-action';
import { heldTooLong } from './held-too-long';
import { lateHolder } from './late-holder';
import { lateRenewal } from './late-renewal';
import { leaderless } from './leaderless';
import { missedRenewal } from './missed-renewal';
import { slowRenewals } from './slow-renewals';
import { sourceDown } from './source-down';
import { splitBrain } from './split-brain';
import { tokenRegression } from './token-regression';

/** In this order in the API's errors, the forms' lists, and when several rules decide on one input. */
export const ALERT_RULES = [missedRenewal, lateRenewal, failover, flapping, leaderless, tokenRegression, sourceDown, heldTooLong, forceAction, lateHolder, splitBrain, slowRenewals] as const;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any module, whatever its parameters' schema
type AnyModule = AlertRuleModule<string, any>;

export type AlertRuleRegistry<T extends string = string> = {
  readonly modules: readonly AlertRuleModule<T, ParamsSchema>[];
  /** The type names, in the list's order. */
  readonly types: readonly [T, ...T[]];
  get(type: string): AlertRuleModule<T, ParamsSchema> | undefined;
};

/** A registry of the rules listed (ALERT_RULES, or a test's list with a rule of its own): each type once. */
export function alertRuleRegistry<const M extends readonly [AnyModule, ...AnyModule[]]>(modules: M): AlertRuleRegistry<M[number]['type']> {
  type T = M[number]['type'];
  const byType = new Map<string, AlertRuleModule<T, ParamsSchema>>();
  for (const ruleModule of modules) {
    if (byType.has(ruleModule.type)) throw new Error(`alert rule type "${ruleModule.type}" is listed twice`);
    byType.set(ruleModule.type, ruleModule);
  }
  return { modules: [...byType.values()], types: modules.map((m) => m.type) as unknown as [T, ...T[]], get: (type) => byType.get(type) };
}

export const ALERT_RULE_REGISTRY = alertRuleRegistry(ALERT_RULES);

type TypesOf<M extends readonly { type: string }[]> = { readonly [K in keyof M]: M[K]['type'] };
export const ALERT_RULE_TYPES = ALERT_RULES.map((m) => m.type) as unknown as TypesOf<typeof ALERT_RULES>;
export type AlertRuleType = (typeof ALERT_RULE_TYPES)[number];

/** Each rule type's defaults, severity and words, as the rules list and the form show them. */
export const RULE_DEFAULTS = Object.fromEntries(ALERT_RULES.map((m) => [m.type, { params: m.defaults as Record<string, number | boolean>, severity: m.severity, describe: m.describe }])) as Record<
  AlertRuleType,
  { params: Record<string, number | boolean>; severity: AlertSeverity; describe: string }
>;
