'use client';
// A source's canary lease on its card (docs/configuring-sources.md, "Canary leases"): what
// holding a lease on this backend costs right now, measured by Leasehold itself: its renewals'
// round trips over the last minute, hour and day, its acquires and releases, and a chart of
// the last hour. The canary's key is not among the source's leases; it is named here.
import { CanaryChart, canaryMs } from '@/components/charts/canary-chart';
import { formatDuration } from '@/lib/domain/duration';
import type { CanaryView, CanaryWindow } from '@/lib/domain/schemas';
import styles from './sources.module.css';

const WINDOWS = ['minute', 'hour', 'day'] as const;

/** Milliseconds in the table, whose columns say the unit: tenths below 10 ms, whole ones above. */
const msCell = (ms: number | null) => (ms === null ? '—' : ms < 10 ? ms.toFixed(1) : Math.round(ms).toLocaleString('en'));

/** A p99 over the slow_renewals threshold's default is shown as a warning. */
function P99({ window, thresholdMs }: { window: CanaryWindow; thresholdMs: number }) {
  const slow = window.p99Ms !== null && window.p99Ms > thresholdMs;
  return <span className={slow ? 'warn-text' : undefined}>{msCell(window.p99Ms)}</span>;
}

function Calls({ label, window }: { label: string; window: CanaryWindow }) {
  if (window.count === 0) return <span className="muted">{label}: none in the last day</span>;
  return (
    <span>
      {label}: {window.count.toLocaleString('en')} in the last day{window.failed ? <span className="bad-text">, {window.failed} failed</span> : null}, p50 {canaryMs(window.p50Ms)}, p99{' '}
      {canaryMs(window.p99Ms)}
    </span>
  );
}

export function CanaryPanel({ source, canary, now }: { source: string; canary: CanaryView; now: number }) {
  const thresholdMs = canary.ttlMs / 4;
  return (
    <section className={styles.detail} aria-label={`Canary lease of ${source}`} data-testid="canary-panel">
      <h3 className={styles.detailTitle}>
        Canary lease{' '}
        <span className={`${styles.detailNote} muted`}>
          <span className="mono">{canary.key}</span>, TTL {formatDuration(canary.ttlMs)}, a call every {formatDuration(canary.everyMs)}; Leasehold&rsquo;s own, not listed among the leases
        </span>
      </h3>
      <div className={styles.canaryBody}>
        <div className={styles.canaryFigures}>
          <table className={`data ${styles.innerTable} ${styles.canaryTable}`} aria-label={`Canary renewals of ${source}`}>
            <thead>
              <tr>
                <th scope="col">Last</th>
                <th scope="col">renewals</th>
                <th scope="col">failed</th>
                <th scope="col">p50 ms</th>
                <th scope="col" className={styles.wideOnly}>
                  p95 ms
                </th>
                <th scope="col">p99 ms</th>
                <th scope="col">max ms</th>
              </tr>
            </thead>
            <tbody className="tabular">
              {WINDOWS.map((name) => {
                const window = canary.calls.renew[name];
                return (
                  <tr key={name} data-window={name}>
                    <th scope="row">{name}</th>
                    <td>{window.count.toLocaleString('en')}</td>
                    <td className={window.failed ? 'bad-text' : undefined}>{window.failed}</td>
                    <td>{msCell(window.p50Ms)}</td>
                    <td className={styles.wideOnly}>{msCell(window.p95Ms)}</td>
                    <td>
                      <P99 window={window} thresholdMs={thresholdMs} />
                    </td>
                    <td>{msCell(window.maxMs)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          <p className={styles.canaryCalls}>
            <Calls label="Acquires" window={canary.calls.acquire.day} />
            <br />
            <Calls label="Releases" window={canary.calls.release.day} />
          </p>
        </div>
        <div className={styles.canaryChart}>
          <CanaryChart canary={canary} end={now} />
        </div>
      </div>
    </section>
  );
}
