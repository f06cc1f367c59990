// The API's bodies for alert rules, built from the list of rules (lib/domain/alert-rules): a new
// rule's parameters are checked by its type's own schema, defaults filled in; a change to a
// rule's parameters by the schema of the rule's type (checkRuleParams, once the rule is read).
import { z } from 'zod';
import { ALERT_RULE_REGISTRY, type AlertRuleRegistry } from '../domain/alert-rules';
import { ALERT_SEVERITIES } from '../domain/alert-types';
import { name, scope } from './body-fields';

/** POST and PATCH /api/v1/alert-rules bodies for the rules a registry lists. */
export function ruleBodies<T extends string>(registry: AlertRuleRegistry<T>) {
  const common = { name, severity: z.enum(ALERT_SEVERITIES).optional(), scope: scope.default({ kind: 'all' }), enabled: z.boolean().default(true) };
  const [first, ...rest] = registry.modules.map((ruleModule) => z.strictObject({ ...common, type: z.literal(ruleModule.type), params: ruleModule.params.prefault({}) }));
  const newRuleBody = z.discriminatedUnion('type', [first!, ...rest], {
    error: (issue) => (issue.code === 'invalid_union' ? `expected one of ${registry.types.join(', ')}` : undefined),
  });
  /** The type is not known until the rule is read: params is an object here, checked by checkRuleParams. */
  const ruleChangeBody = z.strictObject({
    name: name.optional(),
    severity: z.enum(ALERT_SEVERITIES).optional(),
    scope: scope.optional(),
    params: z.record(z.string(), z.unknown()).optional(),
    enabled: z.boolean().optional(),
  });
  /** A rule's parameters checked by its type's schema (defaults filled in), or the first problem as `"params.x": ...`. */
  function checkRuleParams(type: string, params: unknown): { ok: true; params: Record<string, number | boolean> } | { ok: false; error: string } {
    const ruleModule = registry.get(type);
    if (!ruleModule) return { ok: false, error: `this rule's type "${type.slice(0, 40)}" is not one this server knows, so its parameters cannot be checked` };
    const parsed = z.strictObject({ params: ruleModule.params }).safeParse({ params });
    if (parsed.success) return { ok: true, params: parsed.data.params as Record<string, number | boolean> };
    const issue = parsed.error.issues[0]!;
    return { ok: false, error: `"${issue.path.join('.')}": ${issue.message}` };
  }
  return { newRuleBody, ruleChangeBody, checkRuleParams };
}

export const { newRuleBody, ruleChangeBody, checkRuleParams } = ruleBodies(ALERT_RULE_REGISTRY);
