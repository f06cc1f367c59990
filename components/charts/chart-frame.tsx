import { useId, type ReactNode } from 'react';
import styles from './charts.module.css';

export type ChartState = { kind: 'loading' } | { kind: 'empty'; message: string } | { kind: 'error'; message: string } | { kind: 'ready' };

/**
 * The frame every chart of the console sits in: a title, a plot area of fixed height (so a
 * chart that is loading, empty or full takes the same room), a one-sentence summary that
 * screen readers get instead of the drawing, and the test hooks (`data-points`).
 */
export function ChartFrame({
  title,
  label,
  summary,
  note,
  controls,
  legend,
  height,
  state,
  points,
  testId,
  children,
}: {
  title: string;
  /** What the chart is, for assistive technology. */
  label: string;
  /** What it shows, in words: "12 grants, tokens 1 → 57, no regression". */
  summary: string;
  note?: ReactNode;
  controls?: ReactNode;
  legend?: ReactNode;
  height: number;
  state: ChartState;
  points: number;
  testId: string;
  children: ReactNode;
}) {
  const summaryId = useId();
  return (
    <figure className={styles.figure} aria-label={label} aria-describedby={summaryId} aria-busy={state.kind === 'loading'} data-testid={testId} data-points={points}>
      <div className={styles.head}>
        <h3 className={styles.title}>{title}</h3>
        {controls}
      </div>
      <div className={styles.note}>{note}</div>
      <div className={styles.plot} style={{ height }}>
        {state.kind === 'loading' ? (
          <div className={styles.skeleton} aria-hidden="true" />
        ) : state.kind === 'ready' ? (
          children
        ) : (
          <div className={`${styles.empty}${state.kind === 'error' ? ` ${styles.bad}` : ''}`} role={state.kind === 'error' ? 'alert' : undefined}>
            {state.message}
          </div>
        )}
      </div>
      {legend}
      <figcaption id={summaryId} className={styles.summary}>
        {state.kind === 'loading' ? <span className="muted">Loading…</span> : state.kind === 'error' ? <span className="muted">Not available.</span> : summary}
      </figcaption>
    </figure>
  );
}
