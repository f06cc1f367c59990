'use client';
// Rules: name, type, severity, scope, parameters, on or off; a rule Leasehold cannot read
// (edited by hand) shows its problem. Admins switch a rule on or off, change its severity and
// add one; everyone else reads.
import type { AlertRuleView } from '@/lib/db/alert-rules';
import { RULE_DEFAULTS } from '@/lib/domain/alert-rules';
import { ALERT_SEVERITIES } from '@/lib/domain/alert-types';
import { alertRuleViewSchema } from '@/lib/domain/schemas';
import { useState } from 'react';
import { Badge } from '../ui/badge';
import styles from './alerts.module.css';
import { CardTable } from './card-table';
import { RuleForm } from './rule-form';
import { SaidLine, useAction } from './use-action';
import { isRuleType, paramWords, scopeWords, SEVERITY_TONE, shown, typeWords } from './words';

export function RulesPanel({ rules, manage }: { rules: AlertRuleView[]; manage: boolean }) {
  const { act, said, busy } = useAction();
  // On a phone each rule is a card of its name, severity and whether it is on; its type, scope
  // and parameters unfold on demand (alerts.module.css .fold), so the list stays short.
  const [unfolded, setUnfolded] = useState(false);
  const path = (rule: AlertRuleView) => `/api/v1/alert-rules/${encodeURIComponent(rule.id)}`;
  return (
    <>
      {rules.length === 0 ? (
        <p className="muted">No rules: nothing can fire.{manage ? ' Add one below.' : ''}</p>
      ) : (
        <>
          <button className={`button subtle ${styles.phoneOnly}`} type="button" aria-expanded={unfolded} onClick={() => setUnfolded(!unfolded)}>
            {unfolded ? 'Hide type, scope and parameters' : 'Show type, scope and parameters'}
          </button>
          <CardTable
            label="Alert rules"
            className={unfolded ? undefined : styles.folded}
            rows={rules}
            rowKey={(rule) => rule.id}
            rowProps={() => ({ 'data-testid': 'rule-row' })}
            columns={[
              {
                header: 'Rule',
                cell: (rule) => (
                  <>
                    <span className={styles.wrap}>{shown(rule.name, 100)}</span>
                    {rule.builtIn ? <span className="muted small"> (default)</span> : null}
                    {rule.problem !== null ? (
                      <span className={styles.problem} role="note">
                        Not evaluated: {shown(rule.problem, 200)}
                      </span>
                    ) : null}
                  </>
                ),
              },
              { header: 'Type', className: styles.fold, cell: (rule) => <span title={isRuleType(rule.type) ? RULE_DEFAULTS[rule.type].describe : undefined}>{typeWords(rule.type)}</span> },
              {
                header: 'Severity',
                className: styles.nowrap,
                cell: (rule) =>
                  manage && rule.problem === null ? (
                    <select
                      className={styles.inlineSelect}
                      aria-label={`Severity of ${rule.name}`}
                      value={rule.severity}
                      disabled={busy}
                      onChange={(event) => void act('PATCH', path(rule), { severity: event.target.value }, alertRuleViewSchema, `${rule.name} is now ${event.target.value}.`)}
                    >
                      {ALERT_SEVERITIES.map((severity) => (
                        <option key={severity}>{severity}</option>
                      ))}
                    </select>
                  ) : (
                    <Badge tone={SEVERITY_TONE[rule.severity] ?? 'muted'}>{shown(rule.severity, 20)}</Badge>
                  ),
              },
              { header: 'Scope', className: styles.fold, cell: (rule) => <span className={styles.wrap} title={shown(rule.scope, 1024)}>{scopeWords(rule.scope)}</span> },
              {
                header: 'Parameters',
                className: styles.fold,
                cell: (rule) => (
                  <ul className={styles.params}>
                    {paramWords(rule.type, rule.params).map((words) => (
                      <li key={words}>{words}</li>
                    ))}
                  </ul>
                ),
              },
              {
                header: 'On',
                className: styles.nowrap,
                cell: (rule) => (
                  <span className={`${styles.controls} ${styles.inline}`}>
                    <Badge tone={rule.enabled ? 'ok' : 'muted'}>{rule.enabled ? 'on' : 'off'}</Badge>
                    {manage ? (
                      <button
                        className="button subtle"
                        type="button"
                        disabled={busy}
                        aria-label={`${rule.enabled ? 'Switch off' : 'Switch on'} ${rule.name}`}
                        onClick={() => void act('PATCH', path(rule), { enabled: !rule.enabled }, alertRuleViewSchema, `${rule.name} is ${rule.enabled ? 'off: what it had firing is resolved' : 'on'}.`)}
                      >
                        {rule.enabled ? 'Switch off' : 'Switch on'}
                      </button>
                    ) : null}
                  </span>
                ),
              },
            ]}
          />
        </>
      )}
      <SaidLine said={said} />
      {manage ? <RuleForm /> : null}
    </>
  );
}
