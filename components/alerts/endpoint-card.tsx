'use client';
// One webhook endpoint, for admins: where it sends and in which format, whether it is on (or
// why Leasehold turned it off), its deliveries waiting, dead and delivered; a test message
// sent now through the whole path with its outcome; enable, disable, delete (confirmed); and
// its delivery log, where a dead delivery can be replayed.
import { useState } from 'react';
import type { DeliveryView } from '@/lib/db/deliveries';
import { changedWebhookSchema, replayedSchema, webhookTestSchema, type WebhookTest } from '@/lib/domain/schemas';
import type { EndpointRow } from '@/lib/queries/alerts';
import { Badge } from '../ui/badge';
import { useNow } from '../live/now';
import { absolute, When } from '../when';
import styles from './alerts.module.css';
import { Breakable } from './breakable';
import { CardTable } from './card-table';
import { noContent } from '../live/api';
import { SaidLine, useAction } from './use-action';
import { DELIVERY_TONE, humanMs, isRuleType, shown, typeWords } from './words';

function testWords(test: WebhookTest): string {
  const parts = [test.outcome, test.status !== null ? `status ${test.status}` : 'no answer', test.latencyMs !== null ? humanMs(test.latencyMs) : null, test.error ? shown(test.error, 300) : null];
  return parts.filter(Boolean).join(' · ');
}

/** When a waiting delivery goes: "in 4 s", or "due now" once that time has come (a worker takes it within a second). */
function NextAttempt({ iso }: { iso: string }) {
  const now = useNow(1_000);
  if (now !== 0 && Date.parse(iso) <= now) {
    return (
      <time dateTime={iso} title={absolute(iso)}>
        due now
      </time>
    );
  }
  return <When iso={iso} upcoming />;
}

function DeliveryLog({ endpoint, replay, busy }: { endpoint: EndpointRow; replay: (delivery: DeliveryView | null) => void; busy: boolean }) {
  if (endpoint.log.length === 0) return <p className="muted small">Nothing sent yet. Send a test message to see it here.</p>;
  return (
    <CardTable
      label={`Delivery log of ${endpoint.name}`}
      className={styles.logTable}
      rows={endpoint.log}
      rowKey={(delivery) => delivery.id}
      rowProps={(delivery) => ({ 'data-testid': 'delivery-row', 'data-status': delivery.status })}
      columns={[
        { header: 'Made', className: styles.nowrap, cell: (delivery) => <When iso={delivery.createdAt} /> },
        {
          header: 'Status',
          className: styles.nowrap,
          cell: (delivery) => (
            <span className={`${styles.controls} ${styles.inline}`}>
              <Badge tone={DELIVERY_TONE[delivery.status] ?? 'muted'}>{delivery.status}</Badge>
              {delivery.status === 'dead' ? (
                <button className="button subtle" type="button" disabled={busy} onClick={() => replay(delivery)} aria-label={`Replay delivery ${delivery.id}`}>
                  Replay
                </button>
              ) : null}
            </span>
          ),
        },
        {
          header: 'Event',
          cell: (delivery) => (
            <>
              <span className={styles.nowrap}>{shown(delivery.event.replace(/^alert\./, ''), 40)}</span>
              {delivery.summary ? <span className={`${styles.cellSummary} ${styles.logSummary} muted small`}>{shown(delivery.summary, 160)}</span> : null}
            </>
          ),
        },
        { header: 'Code', className: 'tabular', cell: (delivery) => delivery.lastStatusCode ?? '—' },
        { header: 'Latency', className: `tabular ${styles.nowrap}`, cell: (delivery) => (delivery.lastLatencyMs === null ? '—' : humanMs(delivery.lastLatencyMs)) },
        { header: 'Attempts', className: 'tabular', cell: (delivery) => delivery.attempts },
        { header: 'Next attempt', className: styles.nowrap, cell: (delivery) => (delivery.nextAttemptAt ? <NextAttempt iso={delivery.nextAttemptAt} /> : <span className="muted">—</span>) },
        { header: 'Last error', cell: (delivery) => (delivery.lastError ? <span className={styles.cellSummary}>{shown(delivery.lastError, 300)}</span> : <span className="muted">—</span>) },
      ]}
    />
  );
}

export function EndpointCard({ endpoint }: { endpoint: EndpointRow }) {
  const { act, said, busy } = useAction();
  const [test, setTest] = useState<WebhookTest | null>(null);
  const [confirming, setConfirming] = useState(false);
  // The log is open when something in it needs a look (waiting or dead), and after a test.
  const [logOpen, setLogOpen] = useState(endpoint.deliveries.pending > 0 || endpoint.deliveries.dead > 0);
  const base = `/api/v1/webhooks/${encodeURIComponent(endpoint.id)}`;
  const name = shown(endpoint.name, 100);
  async function sendTest() {
    setTest(null);
    setLogOpen(true);
    const answer = await act('POST', `${base}/test`, undefined, webhookTestSchema, 'Test message sent; it is in the delivery log below.');
    if (answer) setTest(answer.data);
  }
  const replay = (delivery: DeliveryView | null) =>
    void act('POST', `${base}/replay`, delivery ? { deliveryId: delivery.id } : {}, replayedSchema, (data) => {
      const n = data.replayed;
      return n === 0 ? 'Nothing to replay: it is no longer dead.' : `${n} ${n === 1 ? 'delivery' : 'deliveries'} queued again, due now.`;
    });
  const { pending, dead, delivered } = endpoint.deliveries;
  return (
    <article className={`panel ${styles.endpoint}`} aria-label={`Endpoint ${endpoint.name}`} data-testid="endpoint">
      <div className={styles.endpointHead}>
        <h3 className={styles.endpointName}>{name}</h3>
        <span className="badge muted">{shown(endpoint.format, 30)}</span>
        {endpoint.enabled ? <Badge tone="ok">enabled</Badge> : <Badge tone="bad">disabled</Badge>}
      </div>
      {!endpoint.enabled ? <p className="bad-text small">{shown(endpoint.disabledReason ?? 'disabled', 300)}</p> : null}
      <dl className={styles.endpointFacts}>
        <div>
          <dt>Sends to</dt>
          <dd className="mono" title="The path after its first segment and the query are not shown: they may hold a credential">
            <Breakable text={shown(endpoint.url, 300)} />
          </dd>
        </div>
        <div>
          <dt>Receives</dt>
          <dd>{endpoint.rules.length === 0 ? 'every rule' : endpoint.rules.map((rule) => (isRuleType(rule) ? typeWords(rule) : `rule ${shown(rule, 60)}`)).join(', ')}</dd>
        </div>
        <div>
          <dt>Deliveries</dt>
          <dd className="tabular" data-testid="delivery-counts">
            <span className={pending > 0 ? 'warn-text' : undefined}>{pending} pending</span> · <span className={dead > 0 ? 'bad-text' : undefined}>{dead} dead</span> · {delivered} delivered
          </dd>
        </div>
        <div>
          <dt>Signing</dt>
          <dd>
            {endpoint.secrets === 2 ? 'two secrets (rotating)' : 'one secret'}
            {endpoint.format === 'pagerduty' ? (endpoint.hasRoutingKey ? ' · routing key set' : ' · no routing key') : ''}
          </dd>
        </div>
      </dl>
      <div className={styles.controls}>
        <button className="button primary" type="button" disabled={busy} onClick={() => void sendTest()}>
          {busy && test === null ? 'Sending…' : 'Send test'}
        </button>
        <button className="button" type="button" disabled={busy} onClick={() => void act('PATCH', base, { enabled: !endpoint.enabled }, changedWebhookSchema, `${endpoint.name} ${endpoint.enabled ? 'disabled: what waits for it stays queued' : 'enabled: what waited for it goes now'}.`)}>
          {endpoint.enabled ? 'Disable' : 'Enable'}
        </button>
        {dead > 0 ? (
          <button className="button" type="button" disabled={busy} onClick={() => replay(null)}>
            Replay all dead ({dead})
          </button>
        ) : null}
        <button className="button subtle" type="button" disabled={busy} onClick={() => setConfirming(true)}>
          Delete…
        </button>
      </div>
      {confirming ? (
        <div className={styles.confirm} role="group" aria-label="Confirm deletion">
          <p>
            Delete <strong>{name}</strong> and its delivery log? Alerts will no longer be sent there.
          </p>
          <span className={styles.controls}>
            <button className="button danger" type="button" disabled={busy} onClick={() => void act('DELETE', base, undefined, noContent, `${endpoint.name} deleted.`).then(() => setConfirming(false))}>
              Delete endpoint
            </button>
            <button className="button subtle" type="button" onClick={() => setConfirming(false)}>
              Keep it
            </button>
          </span>
        </div>
      ) : null}
      {test ? (
        <p className={`${styles.outcome}${test.outcome === 'delivered' ? '' : ` ${styles.outcomeBad}`}`} data-testid="test-outcome">
          Test message: {testWords(test)}
        </p>
      ) : null}
      <SaidLine said={said} />
      <details className={styles.log} open={logOpen} onToggle={(event) => setLogOpen(event.currentTarget.open)}>
        <summary>Delivery log{endpoint.log.length > 1 ? ` (the last ${endpoint.log.length})` : ''}</summary>
        <DeliveryLog endpoint={endpoint} replay={replay} busy={busy} />
      </details>
    </article>
  );
}
