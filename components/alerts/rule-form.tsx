'use client';
// Adding a rule: its type (its parameters follow, filled with the type's defaults), name,
// scope and severity. POST /api/v1/alert-rules. The parameters, their labels and defaults are
// the rule module's (lib/domain/alert-rules): a new rule's fields appear here by themselves.
import { useState, type FormEvent } from 'react';
import { ALERT_RULE_REGISTRY, type AlertRuleModule } from '@/lib/domain/alert-rules';
import { ALERT_RULE_TYPES, ALERT_SEVERITIES, type AlertRuleType } from '@/lib/domain/alert-types';
import { parseDurationMs } from '@/lib/domain/duration';
import { alertRuleViewSchema } from '@/lib/domain/schemas';
import styles from './alerts.module.css';
import { SaidLine, useAction } from './use-action';
import { DURATION_HINT, typeWords } from './words';

const moduleOf = (type: AlertRuleType): AlertRuleModule => ALERT_RULE_REGISTRY.get(type)!;

/** "600000" as people type it: "10m". */
function durationText(ms: number): string {
  for (const [size, unit] of [[86_400_000, 'd'], [3_600_000, 'h'], [60_000, 'm'], [1_000, 's']] as const) if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

/** The params the form holds for a type, or the sentence naming what is wrong. */
function readParams(type: AlertRuleType, form: FormData): { params: Record<string, number | boolean> } | { error: string } {
  const params: Record<string, number | boolean> = {};
  for (const { name: key, kind, label } of moduleOf(type).fields) {
    if (kind === 'flag') {
      params[key] = form.get(key) === 'on';
      continue;
    }
    const text = String(form.get(key) ?? '').trim();
    if (kind === 'duration') {
      const ms = parseDurationMs(text);
      if (ms === null) return { error: `${label}: expected ${DURATION_HINT}, not "${text.slice(0, 40)}".` };
      params[key] = ms;
    } else {
      const value = Number(text);
      if (text === '' || !Number.isFinite(value)) return { error: `${label}: expected a number.` };
      params[key] = value;
    }
  }
  return { params };
}

/** One option per rule type, in words (the rule form's type, the silence form's rule type). */
export function RuleTypeOptions() {
  return ALERT_RULE_TYPES.map((type) => (
    <option key={type} value={type}>
      {typeWords(type)}
    </option>
  ));
}

/** The scope a rule or a silence covers. */
export function ScopeField() {
  return (
    <label>
      Scope
      <input name="scope" defaultValue="all" maxLength={1024} placeholder="all, source:<name> or lease:<glob>" autoComplete="off" spellCheck={false} />
    </label>
  );
}

export function RuleForm() {
  const { act, said, setSaid, busy } = useAction();
  const [type, setType] = useState<AlertRuleType>('missed_renewal');
  const defaults = moduleOf(type);
  async function add(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const element = event.currentTarget;
    const form = new FormData(element);
    const read = readParams(type, form);
    if ('error' in read) return setSaid({ ok: false, text: read.error });
    const name = String(form.get('name') ?? '').trim();
    const body = { name, type, severity: form.get('severity'), scope: String(form.get('scope') ?? '').trim() || 'all', params: read.params };
    if (await act('POST', '/api/v1/alert-rules', body, alertRuleViewSchema, `Rule ${name} added; it is on.`)) {
      element.reset();
      setType('missed_renewal'); // the select's first option, as reset left it
    }
  }
  return (
    <details className={styles.adder}>
      <summary>Add a rule</summary>
      <form className={styles.formGrid} onSubmit={add} aria-label="Add a rule">
        <label>
          Type
          <select name="type" value={type} onChange={(event) => setType(event.target.value as AlertRuleType)}>
            <RuleTypeOptions />
          </select>
        </label>
        <label>
          Name
          <input name="name" required maxLength={100} title="Letters, digits, spaces and . _ @ : ( ) -, starting with a letter or digit" autoComplete="off" />
        </label>
        <ScopeField />
        <label>
          Severity
          <select name="severity" key={type} defaultValue={defaults.severity}>
            {ALERT_SEVERITIES.map((severity) => (
              <option key={severity}>{severity}</option>
            ))}
          </select>
        </label>
        <p className={`${styles.hint} ${styles.wide}`}>Fires when {defaults.describe}.</p>
        {defaults.fields.map(({ name: key, kind, label }) => {
          const value = (defaults.defaults as Record<string, number | boolean>)[key];
          return kind === 'flag' ? (
            <label key={`${type}:${key}`} className={styles.check}>
              <input type="checkbox" name={key} defaultChecked={value === true} /> {label}
            </label>
          ) : (
            <label key={`${type}:${key}`}>
              {label}
              <input name={key} defaultValue={kind === 'duration' ? durationText(Number(value)) : String(value)} inputMode={kind === 'duration' ? 'text' : 'decimal'} autoComplete="off" />
            </label>
          );
        })}
        <div className={styles.formActions}>
          <button className="button primary" type="submit" disabled={busy}>
            Add rule
          </button>
        </div>
      </form>
      <SaidLine said={said} />
    </details>
  );
}
