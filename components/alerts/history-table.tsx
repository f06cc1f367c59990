// History: resolved alerts, newest first, a page at a time ("Older" carries the cursor); for
// admins, each one's deliveries.
import Link from 'next/link';
import type { AlertView } from '@/lib/domain/alert-types';
import type { AlertDeliveries } from '@/lib/queries/alerts';
import { leaseIdPath } from '@/lib/domain/lease-id';
import { Badge } from '../ui/badge';
import { When } from '../when';
import { AlertDeliveriesLine } from './alert-deliveries';
import styles from './alerts.module.css';
import { Breakable } from './breakable';
import { CardTable } from './card-table';
import { humanMs, SEVERITY_TONE, shown } from './words';

/** The lease (a link to its page) or, for source_down, the source. */
export function Subject({ alert }: { alert: Pick<AlertView, 'leaseId' | 'source'> }) {
  if (alert.leaseId === null) {
    return (
      <span className={styles.wrap}>
        source <span className="mono">{shown(alert.source, 120)}</span>
      </span>
    );
  }
  return (
    <Link prefetch={false} className={`mono ${styles.lease}`} href={`/leases/${leaseIdPath(alert.leaseId)}`} title={shown(alert.leaseId, 2000)}>
      <Breakable text={shown(alert.leaseId, 160)} />
    </Link>
  );
}

export function HistoryTable({ history, older, newest, deliveries }: { history: AlertView[]; older: string | null; newest: string | null; deliveries: Record<string, AlertDeliveries> | null }) {
  return (
    <>
      <CardTable
        label="Resolved alerts"
        rows={history}
        rowKey={(alert) => alert.id}
        rowProps={(alert) => ({ 'data-testid': 'resolved-alert', 'data-id': alert.id })}
        columns={[
          { header: 'Resolved', className: styles.nowrap, cell: (alert) => <When iso={alert.endsAt} /> },
          { header: 'Lasted', className: `tabular ${styles.nowrap}`, cell: (alert) => (alert.endsAt ? humanMs(Date.parse(alert.endsAt) - Date.parse(alert.startsAt)) : '—') },
          { header: 'Severity', className: styles.nowrap, cell: (alert) => <Badge tone={SEVERITY_TONE[alert.severity] ?? 'muted'}>{shown(alert.severity, 20)}</Badge> },
          { header: 'Rule', cell: (alert) => <span className={styles.wrap}>{shown(alert.rule.name, 100)}</span> },
          { header: 'Lease or source', cell: (alert) => <Subject alert={alert} /> },
          { header: 'What happened', cell: (alert) => <span className={styles.cellSummary}>{shown(alert.summary, 300)}</span> },
          { header: 'Seen', className: styles.nowrap, cell: (alert) => (alert.occurrences === 1 ? 'once' : `${alert.occurrences.toLocaleString('en')} times`) },
          ...(deliveries ? [{ header: 'Deliveries', cell: (alert: AlertView) => <AlertDeliveriesLine entry={deliveries[alert.id]} silenced={false} /> }] : []),
        ]}
      />
      {older !== null || newest !== null ? (
        <nav className={styles.pager} aria-label="History pages">
          {newest !== null ? (
            <a className="button" href={newest}>
              Newest
            </a>
          ) : null}
          {older !== null ? (
            <a className="button" href={older}>
              Older
            </a>
          ) : null}
        </nav>
      ) : null}
    </>
  );
}
