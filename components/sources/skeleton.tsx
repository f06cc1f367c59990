import styles from './sources.module.css';

/** Reserves the space of a few source cards while the first answer is on its way. */
export function SourcesSkeleton({ cards = 3 }: { cards?: number }) {
  return (
    <div aria-busy="true">
      <span className={styles.visuallyHidden}>Loading sources…</span>
      <div className={styles.summaryPlaceholder} aria-hidden="true" />
      <div className={styles.cards} aria-hidden="true">
        {Array.from({ length: cards }, (_, index) => (
          <div key={index} className={`panel ${styles.card} ${styles.cardPlaceholder}`}>
            <div className={styles.shimmer} style={{ width: '40%', height: 22 }} />
            <div className={styles.shimmer} style={{ width: '90%', height: 14 }} />
            <div className={styles.shimmer} style={{ width: '75%', height: 14 }} />
            <div className={styles.shimmer} style={{ width: '60%', height: 14 }} />
          </div>
        ))}
      </div>
    </div>
  );
}

export function SourcesPageSkeleton() {
  return (
    <>
      <h1>Sources</h1>
      <p className="subtitle">The backends Leasehold reads, whether it can read them, and what they report about themselves.</p>
      <SourcesSkeleton />
    </>
  );
}
