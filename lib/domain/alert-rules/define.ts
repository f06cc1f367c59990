// What an alert rule is, as one module (one file per rule beside this one, listed in index.ts):
// its type's name, default severity and words; its parameters as one zod schema, each with its
// default and how the rule form shows it (the TypeScript type of the parameters, the API's
// validation and the form's fields all come from it); and its evaluation, fed the same inputs
// and ticks as every rule, with state of its own. Pure.
import { z } from 'zod';
import { scopeCovers } from '../alert-scope';
import type { AlertSeverity } from '../alert-types';
import type { AlertFacts, AlertInput, AlertRule, AlertSubject, LeaseFacts } from './model';

/** How the rule form asks for a parameter and the rules list words it. */
export type ParamField = {
  label: string;
  /** duration: milliseconds, typed as "30s" or "10m"; flag: a checkbox. */
  kind: 'duration' | 'number' | 'flag';
  /** The value in a phrase: "within {}" ({} is the value as shown), or for a flag [off, on]. */
  words: string | readonly [string, string];
};

/** A rule's parameters: a strict object of fields, every one with its default. */
export type ParamsSchema = z.ZodObject<Record<string, z.ZodDefault<z.ZodNumber | z.ZodBoolean>>, z.core.$strict>;

const field = <S extends z.ZodType>(schema: S, meta: ParamField) => schema.meta(meta) as S;

/** Builders of parameters: the limits the API enforces, the default, and the form's label. */
export const param = {
  duration: (o: { label: string; words: string; max: number; default: number }) =>
    field(z.number({ error: 'expected a number of milliseconds' }).int().min(0).max(o.max).default(o.default), { label: o.label, kind: 'duration', words: o.words }),
  count: (o: { label: string; words: string; min: number; max: number; default: number }) =>
    field(z.number().int().min(o.min).max(o.max).default(o.default), { label: o.label, kind: 'number', words: o.words }),
  percent: (o: { label: string; words: string; default: number }) => field(z.number().min(0).max(100).default(o.default), { label: o.label, kind: 'number', words: o.words }),
  flag: (o: { label: string; words: readonly [off: string, on: string]; default: boolean }) => field(z.boolean().default(o.default), { label: o.label, kind: 'flag', words: o.words }),
};

/** The usual "resolves by itself after" of an event rule. */
export const resolveAfter = (defaultMs: number) => param.duration({ label: 'Resolves by itself after (duration)', words: 'resolves after {}', max: 7 * 86_400_000, default: defaultMs });

export type RaiseOptions = {
  summary: string;
  /** Left out: empty (NO_FACTS). */
  facts?: Partial<AlertFacts>;
  /** An event rule's hold time: the store resolves the alert after it; null (default) for a condition this rule clears. */
  resolveAfterMs?: number | null;
  /** A condition that lasts (a source down) is raised once; an event raised again counts as a repeat. */
  once?: boolean;
  /** Instead of the rule's own severity. */
  severity?: AlertSeverity;
};

/** A rule of this module's type with its parameters, defaults filled in. */
export type Armed<P> = { readonly rule: AlertRule<string>; readonly params: P };

/** What a rule's evaluation is given: its enabled rules and the two decisions it can make. */
export type RuleActs<P> = {
  readonly rules: readonly Armed<P>[];
  /** The rules whose scope covers this lease. */
  covering(lease: LeaseFacts): Armed<P>[];
  raise(rule: AlertRule<string>, subject: AlertSubject, options: RaiseOptions): void;
  /** Resolves the alert this rule has open for the subject, if this evaluator raised or adopted it. */
  clear(rule: AlertRule<string>, subject: AlertSubject, why: string): void;
  /** clear for every rule of this type. */
  clearAll(subject: AlertSubject, why: string): void;
};

/** A rule's evaluation: each hook optional. State lives in the closure that made it. */
export type RuleHooks<P> = {
  /** Every input, in order: a lease's change, a renewal, a lease's picture, a source up or down, a forced action. */
  on?(input: AlertInput, nowMono: number, act: RuleActs<P>): void;
  /** Once a second: the time-based part. */
  tick?(nowMono: number, act: RuleActs<P>): void;
  /** The source is observed elsewhere now: forget what is kept of it. */
  forget?(source: string): void;
};

export type AlertRuleModule<T extends string = string, S extends ParamsSchema = ParamsSchema> = {
  type: T;
  severity: AlertSeverity;
  /** What it fires on, for the form: "Fires when …". */
  describe: string;
  params: S;
  /** Every parameter's default (`params` parsed from nothing). */
  defaults: z.output<S>;
  /** The parameters as the form shows them, in order. */
  fields: readonly (ParamField & { name: string })[];
  /** A fresh evaluation, with state of its own, for one evaluator. */
  evaluation(): RuleHooks<z.output<S>>;
};

/** An alert rule module from its definition: the defaults and fields are read from its schema. */
export function defineAlertRule<const T extends string, S extends ParamsSchema>(definition: Omit<AlertRuleModule<T, S>, 'defaults' | 'fields'>): AlertRuleModule<T, S> {
  const fields = Object.entries(definition.params.shape).map(([name, schema]) => ({ name, ...(schema.meta() as ParamField) }));
  return { ...definition, defaults: definition.params.parse({}), fields };
}

/** A rule's parameters as evaluated: what is stored, else its type's default (a row edited by hand may leave some out). */
export function armedParams<P>(defaults: P, stored: AlertRule<string>['params']): P {
  const out = { ...defaults } as Record<string, unknown>;
  for (const name of Object.keys(out)) out[name] = stored[name] ?? out[name];
  return out as P;
}

export const covers = (rule: AlertRule<string>, lease: LeaseFacts) => scopeCovers(rule.scope, lease.source, lease.id);
