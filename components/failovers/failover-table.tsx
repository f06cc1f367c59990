'use client';
import Link from 'next/link';
import { formatDuration } from '@/lib/domain/duration';
import { When } from '@/components/when';
import type { FailoverRecord } from '@/lib/domain/failover-stats';
import { leaseIdPath } from '@/lib/domain/lease-id';
import { CauseLabel } from './cause';
import styles from './failovers.module.css';

function HolderCell({ holder, token }: { holder: string | null; token: string | null }) {
  if (holder === null) return <span className="muted">—</span>;
  return (
    <>
      <span className={`mono ${styles.holder}`}>{holder}</span>
      <span className={`${styles.token} tabular`}>{token === null ? 'no token' : `token ${token}`}</span>
    </>
  );
}

/** One row per change of holder, newest first. `linkSuffix` carries the page's time range to the lease page. */
export function FailoverTable({ failovers, linkSuffix }: { failovers: readonly FailoverRecord[]; linkSuffix: string }) {
  return (
    <div className="table-scroll">
      <table className={`data ${styles.table}`} aria-label="Failovers">
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Lease</th>
            <th scope="col">Cause</th>
            <th scope="col">Old holder</th>
            <th scope="col">New holder</th>
            <th scope="col" className={styles.numeric}>
              Gap without holder
            </th>
          </tr>
        </thead>
        <tbody>
          {failovers.map((failover) => (
            <tr key={failover.id} data-testid="failover-row" data-lease-id={failover.leaseId}>
              <td className={styles.when}>
                <When iso={failover.at} />
              </td>
              <td>
                <Link className={`mono ${styles.lease}`} href={`/leases/${leaseIdPath(failover.leaseId)}${linkSuffix}`} prefetch={false}>
                  {failover.leaseId}
                </Link>
              </td>
              <td>
                <CauseLabel cause={failover.cause} />
                {failover.restart ? (
                  <span className={`${styles.token} warn-text`} data-testid="failover-restart" title="The same holder name with a new instance: the node started again and took its lease back; no other node took over">
                    same node, restarted
                  </span>
                ) : null}
              </td>
              <td>
                <HolderCell holder={failover.previousHolder} token={failover.previousToken} />
              </td>
              <td>
                <HolderCell holder={failover.holder} token={failover.token} />
              </td>
              <td className={`${styles.numeric} tabular`}>{failover.gapMs === null ? <span className="muted">—</span> : formatDuration(failover.gapMs)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
