// The AlertRule table: rules as the evaluator takes them (lib/domain/alert-rules.ts). A row that
// cannot be interpreted (edited by hand) is left out of evaluation and shown with its problem.
import { randomUUID } from 'node:crypto';
import { type AlertRule, type AlertRuleParams } from '../domain/alert-rules';
import { formatScope, parseScope } from '../domain/alert-scope';
import { ALERT_RULE_TYPES, ALERT_SEVERITIES, type AlertRuleType, type AlertScope, type AlertSeverity } from '../domain/alert-types';
import type { AlertRuleView } from '../domain/schemas/alerts';
import type { Store } from './store';

type RuleRecord = Awaited<ReturnType<Store['prisma']['alertRule']['findMany']>>[number];

/** A rule as the API shows it: lib/domain/schemas/alerts.ts. */
export type { AlertRuleView };

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The rule a row says, or why it cannot be used. */
export function ruleOf(row: RuleRecord): { ok: true; rule: AlertRule } | { ok: false; problem: string } {
  if (!(ALERT_RULE_TYPES as readonly string[]).includes(row.type)) return { ok: false, problem: `unknown rule type "${row.type.slice(0, 40)}"` };
  if (!(ALERT_SEVERITIES as readonly string[]).includes(row.severity)) return { ok: false, problem: `unknown severity "${row.severity.slice(0, 40)}"` };
  const scope = parseScope(row.scope);
  if (!scope.ok) return { ok: false, problem: scope.error };
  if (!isObject(row.params)) return { ok: false, problem: 'params is not an object' };
  return {
    ok: true,
    rule: { id: row.id, name: row.name, type: row.type as AlertRuleType, severity: row.severity as AlertSeverity, scope: scope.scope, params: row.params as AlertRuleParams, enabled: row.enabled },
  };
}

function ruleView(row: RuleRecord): AlertRuleView {
  const parsed = ruleOf(row);
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    severity: row.severity,
    scope: row.scope,
    params: isObject(row.params) ? row.params : {},
    enabled: row.enabled,
    builtIn: row.builtIn,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    problem: parsed.ok ? null : parsed.problem,
  };
}

export async function listRuleViews(store: Store): Promise<AlertRuleView[]> {
  return (await store.prisma.alertRule.findMany({ orderBy: [{ type: 'asc' }, { name: 'asc' }] })).map(ruleView);
}

/** The rules to evaluate: every row that can be interpreted (disabled ones included, marked). */
export async function loadRules(store: Store): Promise<{ rules: AlertRule[]; problems: string[] }> {
  const rows = await store.prisma.alertRule.findMany({ orderBy: { id: 'asc' } });
  const rules: AlertRule[] = [];
  const problems: string[] = [];
  for (const row of rows) {
    const parsed = ruleOf(row);
    if (parsed.ok) rules.push(parsed.rule);
    else problems.push(`rule ${row.id}: ${parsed.problem}`);
  }
  return { rules, problems };
}

export class RuleNameTakenError extends Error {
  constructor(readonly ruleName: string) {
    super(`A rule named "${ruleName}" already exists: choose another name.`);
    this.name = 'RuleNameTakenError';
  }
}

export type RuleInput = { name: string; type: AlertRuleType; severity: AlertSeverity; scope: AlertScope; params: AlertRuleParams; enabled: boolean };

const taken = (error: unknown, name: string | undefined) => {
  if ((error as { code?: string }).code === 'P2002' && name) return new RuleNameTakenError(name);
  return error;
};

export async function createRule(store: Store, input: RuleInput): Promise<AlertRuleView> {
  try {
    return ruleView(
      await store.prisma.alertRule.create({
        data: { id: randomUUID(), name: input.name, type: input.type, severity: input.severity, scope: formatScope(input.scope), params: input.params, enabled: input.enabled },
      }),
    );
  } catch (error) {
    throw taken(error, input.name);
  }
}

export async function updateRule(store: Store, id: string, change: Partial<Omit<RuleInput, 'type'>>): Promise<AlertRuleView | null> {
  try {
    const { count } = await store.prisma.alertRule.updateMany({
      where: { id },
      data: {
        ...(change.name !== undefined ? { name: change.name } : {}),
        ...(change.severity !== undefined ? { severity: change.severity } : {}),
        ...(change.scope !== undefined ? { scope: formatScope(change.scope) } : {}),
        ...(change.params !== undefined ? { params: change.params } : {}),
        ...(change.enabled !== undefined ? { enabled: change.enabled } : {}),
      },
    });
    if (count === 0) return null;
  } catch (error) {
    throw taken(error, change.name);
  }
  const row = await store.prisma.alertRule.findUnique({ where: { id } });
  return row ? ruleView(row) : null;
}

/** The type of a rule (which never changes), or null when there is no such rule. */
export async function readRuleType(store: Store, id: string): Promise<string | null> {
  const row = await store.prisma.alertRule.findUnique({ where: { id }, select: { type: true } });
  return row?.type ?? null;
}

export async function deleteRule(store: Store, id: string): Promise<boolean> {
  const { count } = await store.prisma.alertRule.deleteMany({ where: { id } });
  return count === 1;
}

/** A number that changes whenever a rule changes, so engines reload only then. */
export async function rulesVersion(store: Store): Promise<string> {
  const rows = await store.withSql((sql) => sql.query<{ v: string | null }>(`SELECT count(*)::text || ':' || coalesce(max("updatedAt")::text, '') AS v FROM "AlertRule"`));
  return rows[0]?.v ?? '';
}
