'use client';
// The guarded actions of a lease (lib/admin), for those whose role allows them: the state the
// person sees is what the action expects (a 409 when the lease changed since), a dry run shows
// what will be sent, a reason is kept in the audit log, and the lease key must be typed in.
import Link from 'next/link';
import { useState } from 'react';
import { ApiError, sendJson } from '@/components/live/api';
import type { LeaseDetail } from '@/components/live/types';
import { actionNamed, actionsFor, ADMIN_ACTIONS } from '@/lib/domain/admin-actions';
import { forceAnswerSchema, forceChangedSchema } from '@/lib/domain/schemas';

export type LeaseAbilities = { fenced: boolean; unfenced: boolean };

type Step = { what: string; statement: string; args: string[] };
type Outcome =
  | { kind: 'plan'; steps: Step[]; layout: string }
  | { kind: 'done'; previousToken: string | null; newToken: string | null; auditId: string }
  | { kind: 'error'; message: string; current?: { holder: string | null; token: string | null } | null };

async function post(leaseId: string, action: string, body: Record<string, unknown>): Promise<Outcome> {
  try {
    const data = await sendJson(`/api/v1/leases/${encodeURIComponent(leaseId)}/${action}`, 'POST', body, forceAnswerSchema);
    if ('dryRun' in data) return { kind: 'plan', steps: data.plan.steps, layout: data.plan.layout };
    return { kind: 'done', previousToken: data.previousToken, newToken: data.newToken, auditId: data.auditId };
  } catch (error) {
    if (!(error instanceof ApiError) || error.status === 0) return { kind: 'error', message: 'The server cannot be reached.' };
    const changed = forceChangedSchema.safeParse(error.body);
    return { kind: 'error', message: error.message, current: changed.success ? changed.data.backend : undefined };
  }
}

export function ActionPanel({ lease, abilities }: { lease: LeaseDetail; abilities: LeaseAbilities }) {
  const fenced = lease.fenced;
  const allowed = fenced ? abilities.fenced : abilities.unfenced;
  const [seen, setSeen] = useState<{ holder: string; token: string | null } | null>(null);
  const [reason, setReason] = useState('');
  const [typed, setTyped] = useState('');
  const [quarantine, setQuarantine] = useState('');
  const [acknowledged, setAcknowledged] = useState(false);
  const [busy, setBusy] = useState(false);
  const [plan, setPlan] = useState<Outcome | null>(null);
  const [result, setResult] = useState<Outcome | null>(null);
  // The actions of the table (lib/domain/admin-actions.ts) this lease allows; the first is the default.
  const choices = actionsFor(fenced);
  const [chosen, setChosen] = useState(choices[0]!.name);
  if (!allowed || (lease.state !== 'held' && !seen)) return null;
  // A fenced lease: expire (the row reads expired) or release (it reads free); both raise the token.
  const action = actionNamed(chosen, ADMIN_ACTIONS)!;
  const label = action.title;

  if (!seen) {
    return (
      <section className="panel action-panel" aria-label="Admin actions">
        <button className="button danger" type="button" onClick={() => setSeen({ holder: lease.holder ?? '', token: lease.token })}>
          {`${choices[0]!.title}…`}
        </button>{' '}
        <span className="muted">{fenced ? 'Ends the lease now and raises its fencing token, so the old holder\'s late writes are refused.' : 'Frees the lease. It is not fenced: the old holder may still act.'}</span>
      </section>
    );
  }
  const quarantineMs = quarantine.trim() === '' ? undefined : Math.round(Number(quarantine) * 1000);
  const body = { expectedHolder: seen.holder, expectedToken: seen.token, reason, ...(quarantineMs ? { quarantineMs } : {}), ...(fenced ? {} : { acknowledgeUnfenced: acknowledged }) };
  const changed = lease.holder !== seen.holder || lease.token !== seen.token;
  const ready = reason.trim().length >= 10 && typed === lease.key && (fenced || acknowledged) && !busy && (quarantineMs === undefined || quarantineMs > 0);
  const run = async (dryRun: boolean) => {
    setBusy(true);
    const outcome = await post(lease.id, action.name, { ...body, dryRun });
    setBusy(false);
    if (dryRun) setPlan(outcome);
    else setResult(outcome);
  };
  return (
    <section className="panel action-panel" aria-label="Admin actions">
      <h2 className="panel-title">{label}</h2>
      <p>
        You see <b className="mono">{seen.holder}</b> holding it with token <b className="mono">{seen.token ?? 'none (unfenced)'}</b>. The action happens only if
        that is still so on the backend.
      </p>
      {changed && !result && (
        <p className="form-error" role="alert">
          The lease changed since you opened this ({lease.holder ?? 'nobody'} holds it now, token {lease.token ?? 'none'}): the action will be refused. Close and open again to act on what it is now.
        </p>
      )}
      <div className="form">
        {choices.length > 1 && (
          <label>
            Action
            <select value={action.name} onChange={(event) => setChosen(event.target.value)}>
              {choices.map((row) => (
                <option key={row.name} value={row.name}>{`${row.name}: ${row.effect}`}</option>
              ))}
            </select>
          </label>
        )}
        <label>
          Reason (at least 10 characters; kept in the audit log)
          <textarea value={reason} onChange={(event) => setReason(event.target.value)} maxLength={2000} />
        </label>
        <label>
          Quarantine, seconds (optional: nobody may take the lease before then)
          <input inputMode="decimal" value={quarantine} onChange={(event) => setQuarantine(event.target.value)} placeholder="e.g. 15" />
        </label>
        {!fenced && (
          <label className="checkbox">
            <span>
              <input type="checkbox" checked={acknowledged} onChange={(event) => setAcknowledged(event.target.checked)} /> I understand the old holder may still act: nothing will refuse its writes.
            </span>
          </label>
        )}
        <button className="button" type="button" disabled={busy || reason.trim().length < 10} onClick={() => run(true)}>
          Preview (dry run)
        </button>
        {plan?.kind === 'plan' && (
          <div aria-label="Dry run">
            <p className="muted">What will be sent ({plan.layout}):</p>
            {plan.steps.map((step, index) => (
              <pre key={index}>{`${step.what}\n${step.statement}\n${step.args.length ? `-- arguments: ${JSON.stringify(step.args)}` : ''}`}</pre>
            ))}
          </div>
        )}
        {plan?.kind === 'error' && <p className="form-error">{plan.message}</p>}
        <label>
          Type the lease key to confirm: <span className="mono">{lease.key}</span>
          <input value={typed} onChange={(event) => setTyped(event.target.value)} autoComplete="off" spellCheck={false} />
        </label>
        <button className="button danger" type="button" disabled={!ready} onClick={() => run(false)}>
          {label} now
        </button>
        <button className="button subtle" type="button" onClick={() => { setSeen(null); setPlan(null); setResult(null); }}>
          Close
        </button>
      </div>
      {result?.kind === 'done' && (
        <div className="action-result" role="status">
          <p>
            Done. Token {result.previousToken ?? '—'} → <b className="mono">{result.newToken ?? 'none (unfenced)'}</b>.{' '}
            <Link prefetch={false} href={`/audit?lease=${encodeURIComponent(lease.id)}#audit-${result.auditId}`}>
              Audit entry {result.auditId}
            </Link>
          </p>
        </div>
      )}
      {result?.kind === 'error' && (
        <p className="form-error" role="alert">
          {result.message}
        </p>
      )}
    </section>
  );
}
