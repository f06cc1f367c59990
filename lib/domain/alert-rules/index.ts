// Alert rules: one module per rule type (its parameters, defaults and evaluation), the list of
// them (registry.ts), and the evaluator that runs the listed rules (evaluator.ts). Pure.
export * from './model';
export { param, resolveAfter, defineAlertRule, type AlertRuleModule, type ParamField, type ParamsSchema, type RaiseOptions, type RuleActs, type RuleHooks, type Armed } from './define';
export { ALERT_RULES, ALERT_RULE_REGISTRY, RULE_DEFAULTS, alertRuleRegistry, type AlertRuleRegistry } from './registry';
export { AlertEvaluator } from './evaluator';
