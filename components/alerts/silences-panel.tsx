'use client';
// Silences: in force, to come, or ended within the day. While one is in force, the alerts it
// covers are recorded but not delivered. Admins add one (scope, optionally a rule type, how
// long, why) and end one early.
import type { FormEvent } from 'react';
import { parseDurationMs } from '@/lib/domain/duration';
import { silenceViewSchema } from '@/lib/domain/schemas';
import type { SilenceRow } from '@/lib/queries/alerts';
import { Badge, type BadgeTone } from '../ui/badge';
import { When } from '../when';
import styles from './alerts.module.css';
import { CardTable } from './card-table';
import { RuleTypeOptions, ScopeField } from './rule-form';
import { SaidLine, useAction } from './use-action';
import { DURATION_HINT, scopeWords, shown, typeWords } from './words';

const STATE_TONE: Record<SilenceRow['state'], BadgeTone> = { 'in force': 'warn', 'to come': 'muted', ended: 'muted' };
const MAX_MS = 90 * 86_400_000;

function SilenceForm() {
  const { act, said, setSaid, busy } = useAction();
  async function add(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const element = event.currentTarget;
    const form = new FormData(element);
    const text = String(form.get('duration') ?? '');
    const durationMs = parseDurationMs(text);
    if (durationMs === null || durationMs < 1_000 || durationMs > MAX_MS) return setSaid({ ok: false, text: `How long: expected ${DURATION_HINT} (at most 90d), not "${text.slice(0, 40)}".` });
    const reason = String(form.get('reason') ?? '').trim();
    if (reason.length < 10) return setSaid({ ok: false, text: 'Reason: at least 10 characters, so that whoever is paged next knows why.' });
    const ruleType = String(form.get('ruleType') ?? '');
    const body = { scope: String(form.get('scope') ?? '').trim() || 'all', ruleType: ruleType === '' ? null : ruleType, durationMs, reason };
    if (await act('POST', '/api/v1/silences', body, silenceViewSchema, `Silence added, in force for ${text.trim()}.`)) element.reset();
  }
  return (
    <details className={styles.adder}>
      <summary>Add a silence</summary>
      <form className={styles.formGrid} onSubmit={add} aria-label="Add a silence">
        <ScopeField />
        <label>
          Rule type
          <select name="ruleType" defaultValue="">
            <option value="">every rule type</option>
            <RuleTypeOptions />
          </select>
        </label>
        <label>
          For how long
          <input name="duration" required defaultValue="1h" placeholder="1h" autoComplete="off" spellCheck={false} />
        </label>
        <label className={styles.wide}>
          Reason (at least 10 characters)
          <textarea name="reason" required minLength={10} maxLength={1000} placeholder="e.g. planned failover drill on the billing cluster" />
        </label>
        <div className={styles.formActions}>
          <button className="button primary" type="submit" disabled={busy}>
            Add silence
          </button>
          <span className={styles.hint}>Alerts it covers are still recorded and shown here; they are delivered when it ends, if still firing.</span>
        </div>
      </form>
      <SaidLine said={said} />
    </details>
  );
}

export function SilencesPanel({ silences, manage }: { silences: SilenceRow[]; manage: boolean }) {
  const { act, said, busy } = useAction();
  return (
    <>
      {silences.length === 0 ? (
        <p className="muted">No silence in force, to come, or ended today: every alert is delivered.</p>
      ) : (
        <CardTable
          label="Silences"
          rows={silences}
          rowKey={(silence) => silence.id}
          rowProps={(silence) => ({ 'data-testid': 'silence-row', 'data-state': silence.state })}
          columns={[
            { header: 'State', className: styles.nowrap, cell: (silence) => <Badge tone={STATE_TONE[silence.state]}>{silence.state}</Badge> },
            {
              header: 'Covers',
              cell: (silence) => (
                <span className={styles.wrap} title={shown(silence.scope, 1024)}>
                  {scopeWords(silence.scope)}
                  <span className="muted small" style={{ display: 'block' }}>
                    {silence.ruleType ? `${typeWords(silence.ruleType)} alerts only` : 'alerts of every rule type'}
                  </span>
                </span>
              ),
            },
            { header: 'From', className: styles.nowrap, cell: (silence) => <When iso={silence.startsAt} upcoming /> },
            { header: 'Until', className: styles.nowrap, cell: (silence) => <When iso={silence.endsAt} upcoming /> },
            { header: 'Reason', cell: (silence) => <span className={styles.cellSummary}>{shown(silence.reason, 300)}</span> },
            { header: 'By', className: `mono ${styles.nowrap}`, cell: (silence) => shown(silence.author, 40) },
            ...(manage
              ? [
                  {
                    header: 'End',
                    className: styles.nowrap,
                    cell: (silence: SilenceRow) =>
                      silence.state === 'ended' ? (
                        <span className="muted">—</span>
                      ) : (
                        <button className="button subtle" type="button" disabled={busy} onClick={() => void act('DELETE', `/api/v1/silences/${encodeURIComponent(silence.id)}`, undefined, silenceViewSchema, 'Silence ended: what it held back and still fires is delivered now.')}>
                          End now
                        </button>
                      ),
                  },
                ]
              : []),
          ]}
        />
      )}
      <SaidLine said={said} />
      {manage ? <SilenceForm /> : null}
    </>
  );
}
