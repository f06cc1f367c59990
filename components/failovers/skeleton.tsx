import styles from './failovers.module.css';

/** Reserves the space the chart and the first rows will take, so nothing jumps when they arrive. */
export function FailoversSkeleton({ rows = 8 }: { rows?: number }) {
  return (
    <div className={styles.skeleton} aria-busy="true">
      <span className={styles.visuallyHidden}>Loading failovers…</span>
      <div className={styles.summaryPlaceholder} aria-hidden="true" />
      <div className={`panel ${styles.chartPanel}`} aria-hidden="true">
        <div className={styles.shimmer} style={{ height: 208 }} />
      </div>
      <div className={styles.rowsPlaceholder} aria-hidden="true">
        {Array.from({ length: rows }, (_, index) => (
          <div key={index} className={styles.shimmer} />
        ))}
      </div>
    </div>
  );
}

/** The page as first painted, before the URL (filters, range) has been read. */
export function FailoversPageSkeleton() {
  return (
    <>
      <h1>Failovers</h1>
      <p className="subtitle">Every change of holder across all leases: expiries, releases, takeovers and forced actions, newest first.</p>
      <div className={`toolbar ${styles.toolbarPlaceholder}`} aria-hidden="true" />
      <FailoversSkeleton />
    </>
  );
}
