// An alert's deliveries, for admins: one line that says where it stands ("2 delivered · 1
// waiting · 1 dead"), opening on each delivery: the endpoint, the event, its status, the
// answer (code and time), the attempts, when the next one goes and the last error. Open at
// first when something waits or is dead. The endpoints' own logs (below, under Endpoints) hold
// the rest and replay dead ones.
import type { AlertDelivery } from '@/lib/db/deliveries';
import type { AlertDeliveries } from '@/lib/queries/alerts';
import { Badge } from '../ui/badge';
import { When } from '../when';
import styles from './alerts.module.css';
import { DELIVERY_TONE, humanMs, shown } from './words';

const STATUS_WORDS: Record<string, string> = { delivered: 'delivered', pending: 'waiting', dead: 'dead' };

function summaryOf(entry: AlertDeliveries): string {
  const counts = new Map<string, number>();
  for (const delivery of entry.deliveries) counts.set(delivery.status, (counts.get(delivery.status) ?? 0) + 1);
  const parts = ['delivered', 'pending', 'dead'].filter((status) => counts.has(status)).map((status) => `${counts.get(status)} ${STATUS_WORDS[status]}`);
  const more = entry.total > entry.deliveries.length ? ` (the last ${entry.deliveries.length} of ${entry.total.toLocaleString('en')})` : '';
  return `Deliveries: ${parts.join(' · ')}${more}`;
}

function Answer({ delivery }: { delivery: AlertDelivery }) {
  const parts: string[] = [];
  if (delivery.lastStatusCode !== null) parts.push(`HTTP ${delivery.lastStatusCode}`);
  if (delivery.lastLatencyMs !== null) parts.push(humanMs(delivery.lastLatencyMs));
  if (delivery.attempts > 1 || delivery.status !== 'delivered') parts.push(`${delivery.attempts} ${delivery.attempts === 1 ? 'attempt' : 'attempts'}`);
  return parts.length > 0 ? <span className="tabular">{parts.join(' · ')}</span> : null;
}

export function AlertDeliveriesLine({ entry, silenced }: { entry: AlertDeliveries | undefined; silenced: boolean }) {
  if (!entry || entry.total === 0) {
    return (
      <p className="muted small" data-testid="alert-deliveries" data-count="0">
        {silenced ? 'Not sent: a silence holds it back.' : 'Not sent: no endpoint was set to receive this rule when it fired.'}
      </p>
    );
  }
  const needsLook = entry.deliveries.some((delivery) => delivery.status !== 'delivered');
  return (
    <details className={styles.deliveries} open={needsLook} data-testid="alert-deliveries" data-count={entry.total}>
      <summary>{summaryOf(entry)}</summary>
      <ul className={styles.deliveryList}>
        {entry.deliveries.map((delivery) => (
          <li key={delivery.id} data-testid="alert-delivery" data-status={delivery.status}>
            <Badge tone={DELIVERY_TONE[delivery.status] ?? 'muted'}>{STATUS_WORDS[delivery.status] ?? shown(delivery.status, 20)}</Badge>
            <span className="mono">{shown(delivery.webhookName, 80)}</span>
            <span className="muted">{shown(delivery.event.replace(/^alert\./, ''), 40)}</span>
            <Answer delivery={delivery} />
            {delivery.status === 'pending' && delivery.nextAttemptAt ? (
              <span>
                next <When iso={delivery.nextAttemptAt} upcoming />
              </span>
            ) : delivery.deliveredAt ? (
              <span className="muted">
                <When iso={delivery.deliveredAt} />
              </span>
            ) : null}
            {delivery.lastError && delivery.status !== 'delivered' ? <span className={`${styles.cellSummary} small`}>{shown(delivery.lastError, 240)}</span> : null}
          </li>
        ))}
      </ul>
    </details>
  );
}
