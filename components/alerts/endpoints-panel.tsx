'use client';
// Webhook endpoints, for admins: each one's card, and adding one. The signing secret Leasehold
// makes is in the answer to the POST only: it is shown here once, to be copied now.
import { useRef, useState, type FormEvent } from 'react';
import { ALERT_RULE_TYPES } from '@/lib/domain/alert-types';
import { newWebhookSchema } from '@/lib/domain/schemas';
import type { EndpointRow } from '@/lib/queries/alerts';
import styles from './alerts.module.css';
import { EndpointCard } from './endpoint-card';
import { SaidLine, useAction } from './use-action';
import { typeWords } from './words';

function SecretOnce({ made, onDone }: { made: { name: string; secret: string }; onDone: () => void }) {
  const [copied, setCopied] = useState<string | null>(null);
  async function copy() {
    try {
      await navigator.clipboard.writeText(made.secret);
      setCopied('Copied.');
    } catch {
      setCopied('This browser would not copy it: select the text and copy it yourself.');
    }
  }
  return (
    <div className={styles.secret} role="status" data-testid="secret-once">
      <p>
        Endpoint <strong>{made.name}</strong> added. Its signing secret is shown <strong>this once</strong>: copy it now and give it to the receiver, which
        verifies the webhook-signature header with it. It cannot be shown again (a new one can be made by rotating it through the API).
      </p>
      <pre aria-label="Signing secret" data-testid="webhook-secret">
        {made.secret}
      </pre>
      <span className={styles.controls}>
        <button className="button" type="button" onClick={() => void copy()}>
          Copy secret
        </button>
        <button className="button subtle" type="button" onClick={onDone}>
          I have kept it
        </button>
        {copied ? <span className="small muted">{copied}</span> : null}
      </span>
    </div>
  );
}

function EndpointForm({ formats }: { formats: readonly string[] }) {
  const { act, said, busy } = useAction();
  const [format, setFormat] = useState('native');
  const [made, setMade] = useState<{ name: string; secret: string } | null>(null);
  const secretRef = useRef<HTMLDivElement>(null);
  async function add(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const element = event.currentTarget;
    const form = new FormData(element);
    const name = String(form.get('name') ?? '').trim();
    const routingKey = String(form.get('routingKey') ?? '').trim();
    const body = { name, url: String(form.get('url') ?? '').trim(), format, rules: form.getAll('rules').map(String), ...(format === 'pagerduty' && routingKey ? { routingKey } : {}) };
    const answer = await act('POST', '/api/v1/webhooks', body, newWebhookSchema, `Endpoint ${name} added.`);
    if (answer) {
      setMade({ name, secret: answer.data.secret });
      element.reset();
      setFormat('native');
      requestAnimationFrame(() => secretRef.current?.scrollIntoView({ block: 'nearest' }));
    }
  }
  return (
    <details className={styles.adder} open={made !== null ? true : undefined}>
      <summary>Add an endpoint</summary>
      <form className={styles.formGrid} onSubmit={add} aria-label="Add an endpoint">
        <label>
          Name
          <input name="name" required maxLength={100} autoComplete="off" />
        </label>
        <label className={styles.wide}>
          URL (https://, or http:// to an address in alerts.allowCidrs)
          <input name="url" type="url" required maxLength={2048} placeholder="https://hooks.example.com/leasehold" autoComplete="off" spellCheck={false} />
        </label>
        <label>
          Format
          <select name="format" value={format} onChange={(event) => setFormat(event.target.value)}>
            {formats.map((f) => (
              <option key={f}>{f}</option>
            ))}
          </select>
        </label>
        {format === 'pagerduty' ? (
          <label>
            PagerDuty routing key
            <input name="routingKey" required maxLength={200} autoComplete="off" spellCheck={false} placeholder="the Events API v2 integration key" />
          </label>
        ) : null}
        <fieldset className={`${styles.fieldset} ${styles.wide}`}>
          <legend>Rules it receives (none ticked: every rule)</legend>
          <div className={styles.choices}>
            {ALERT_RULE_TYPES.map((type) => (
              <label key={type}>
                <input type="checkbox" name="rules" value={type} /> {typeWords(type)}
              </label>
            ))}
          </div>
        </fieldset>
        <div className={styles.formActions}>
          <button className="button primary" type="submit" disabled={busy}>
            Add endpoint
          </button>
          <span className={styles.hint}>A signing secret (whsec_…) is made for it and shown once.</span>
        </div>
      </form>
      {made ? (
        <div ref={secretRef}>
          <SecretOnce made={made} onDone={() => setMade(null)} />
        </div>
      ) : (
        <SaidLine said={said} />
      )}
    </details>
  );
}

export function EndpointsPanel({ endpoints, formats }: { endpoints: EndpointRow[]; formats: readonly string[] }) {
  return (
    <>
      {endpoints.length === 0 ? <p className="muted">No endpoints: alerts are recorded and shown here, but sent nowhere. Add one below.</p> : null}
      {endpoints.map((endpoint) => (
        <EndpointCard key={endpoint.id} endpoint={endpoint} />
      ))}
      <EndpointForm formats={formats} />
    </>
  );
}
