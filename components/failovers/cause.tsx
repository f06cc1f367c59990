import { FORCE_EVENT_TYPES } from '@/lib/domain/admin-actions';
import { CAUSE_TEXT, type FailoverCause } from '@/lib/domain/failover-stats';
import styles from './failovers.module.css';

/**
 * The colours of the admin actions' causes, in the order of their table (lib/domain/admin-actions.ts):
 * a new row takes the next, so adding an action needs nothing here.
 */
const FORCED_COLORS = ['var(--accent)', 'var(--cause-force-2)', 'var(--cause-force-3)', 'var(--cause-force-4)'];

/** One colour per cause, shared by the chart and the table; CSS variables, so both themes work. */
export const CAUSE_COLOR: Record<FailoverCause, string> = {
  expired: 'var(--bad)',
  taken_over: 'var(--warn)',
  released: 'var(--ok)',
  ...(Object.fromEntries(FORCE_EVENT_TYPES.map((type, index) => [type, FORCED_COLORS[index % FORCED_COLORS.length]!])) as Record<(typeof FORCE_EVENT_TYPES)[number], string>),
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
