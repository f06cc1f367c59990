// Firing now: one card per alert, the most severe first. Severity in the card's colour and in
// words; the lease (a link to its page) or the source; what happened; the holder, token,
// margin and gap when the alert has them; since when (relative, the absolute time on hover)
// and how often it was seen again; for admins, its deliveries.
import type { AlertDeliveries, FiringAlert } from '@/lib/queries/alerts';
import { Badge } from '../ui/badge';
import { When } from '../when';
import { AlertDeliveriesLine } from './alert-deliveries';
import styles from './alerts.module.css';
import { Subject } from './history-table';
import { humanMs, SEVERITY_TONE, shown, typeWords } from './words';

const SEVERITY_CLASS: Record<string, string | undefined> = { critical: styles.critical, warning: styles.warning, info: styles.info };

function Facts({ alert }: { alert: FiringAlert }) {
  const facts: [string, string][] = [];
  if (alert.holder !== null) facts.push(['holder', shown(alert.holder, 120)]);
  if (alert.previousHolder !== null && alert.previousHolder !== alert.holder) facts.push(['previous holder', shown(alert.previousHolder, 120)]);
  if (alert.token !== null) facts.push(['token', alert.previousToken !== null && alert.previousToken !== alert.token ? `${shown(alert.previousToken, 40)} → ${shown(alert.token, 40)}` : shown(alert.token, 40)]);
  if (alert.ttlMs !== null) facts.push(['TTL', humanMs(alert.ttlMs)]);
  if (alert.marginMs !== null) facts.push(['margin', humanMs(alert.marginMs)]);
  if (alert.gapMs !== null) facts.push(['gap', humanMs(alert.gapMs)]);
  if (facts.length === 0) return null;
  return (
    <dl className={styles.facts}>
      {facts.map(([label, value]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd className="mono" data-testid={`alert-${label.replace(' ', '-')}`}>
            {value}
          </dd>
        </div>
      ))}
    </dl>
  );
}

export function FiringList({ firing, capped, deliveries }: { firing: FiringAlert[]; capped: boolean; deliveries: Record<string, AlertDeliveries> | null }) {
  return (
    <>
      <ol className={styles.alertList} aria-label="Firing alerts">
        {firing.map((alert) => (
          <li key={alert.id} className={`${styles.alertCard} ${SEVERITY_CLASS[alert.severity] ?? ''}`} data-testid="firing-alert">
            <div className={styles.alertHead}>
              <Badge tone={SEVERITY_TONE[alert.severity] ?? 'muted'}>{shown(alert.severity, 20)}</Badge>
              <span className={styles.ruleName}>{shown(alert.rule.name, 100)}</span>
              {alert.rule.name.toLowerCase() !== typeWords(alert.rule.type) ? <span className="muted small">{typeWords(alert.rule.type)}</span> : null}
              {alert.silenced ? (
                <span className="badge muted" title="A silence in force covers it: it is recorded but not delivered">
                  silenced
                </span>
              ) : null}
              <span className={styles.since}>
                since <When iso={alert.startsAt} />
                {alert.occurrences > 1 ? ` · seen ${alert.occurrences.toLocaleString('en')} times` : ''}
              </span>
            </div>
            <p className={styles.subject}>
              <Subject alert={alert} />
            </p>
            <p className={styles.summary}>{shown(alert.summary, 400)}</p>
            <Facts alert={alert} />
            {deliveries ? <AlertDeliveriesLine entry={deliveries[alert.id]} silenced={alert.silenced} /> : null}
          </li>
        ))}
      </ol>
      {capped ? <p className={styles.more}>Only the {firing.length} newest are shown; more are firing (GET /api/v1/alerts?state=firing pages through all).</p> : null}
    </>
  );
}
