import { CAUSE_TEXT, type FailoverCause } from '@/lib/domain/failover-stats';
import styles from './failovers.module.css';

/** One colour per cause, shared by the chart and the table; CSS variables, so both themes work. */
export const CAUSE_COLOR: Record<FailoverCause, string> = {
  expired: 'var(--bad)',
  taken_over: 'var(--warn)',
  released: 'var(--ok)',
  force_expired: 'var(--accent)',
  force_released: 'var(--cause-force-released)',
  unknown: 'var(--muted)',
};

export function CauseLabel({ cause }: { cause: FailoverCause }) {
  return (
    <span className={styles.cause}>
      <span className={styles.swatch} style={{ background: CAUSE_COLOR[cause] ?? CAUSE_COLOR.unknown }} aria-hidden="true" />
      {CAUSE_TEXT[cause] ?? cause}
    </span>
  );
}
