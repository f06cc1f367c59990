'use client';
// Who held the lease when, over the chosen range: one track, a segment per grant, failovers
// marked, time nobody held it left empty, time Leasehold could not see hatched. The list of
// segments below it says the same in words.
import { formatInstant, formatTick, timeTicks } from '@/components/charts/time-axis';
import { formatDuration } from '@/lib/domain/duration';
import { ADMIN_ACTIONS, type ForceEventType } from '@/lib/domain/admin-actions';
import { timelineSummary, type HolderTimeline, type SegmentEnd } from '@/lib/domain/holder-timeline';
import styles from './lease-detail.module.css';

const SHADES = [styles.shade0, styles.shade1, styles.shade2, styles.shade3];
const END_TEXT: Record<SegmentEnd, string> = {
  released: 'released',
  expired: 'expired (missed renewal)',
  taken_over: 'taken over',
  // Each admin action's event, as its row says what was done ("force-expired").
  ...(Object.fromEntries(Object.values(ADMIN_ACTIONS).map((row) => [row.eventType, row.done])) as Record<ForceEventType, string>),
  observation_gap: 'not observed after this',
  replaced: 'replaced',
};

export function HolderTimelineView({
  timeline,
  loading,
  error,
  note,
}: {
  timeline: HolderTimeline | null;
  loading: boolean;
  error: string | null;
  note?: string;
}) {
  const start = timeline?.start ?? 0;
  const end = timeline?.end ?? 1;
  const span = Math.max(1, end - start);
  const left = (t: number) => `${((t - start) / span) * 100}%`;
  const width = (from: number, to: number) => `${((to - from) / span) * 100}%`;
  const holders = new Map<string, number>();
  for (const segment of timeline?.segments ?? []) if (!holders.has(segment.holder)) holders.set(segment.holder, holders.size);
  const ready = timeline !== null && !loading && error === null;
  const summary = ready ? timelineSummary(timeline) : loading ? 'Loading…' : 'Not available.';

  return (
    <section
      className="panel"
      aria-labelledby="holder-timeline-title"
      aria-describedby="holder-timeline-summary"
      aria-busy={loading}
      data-testid="holder-timeline"
      data-segments={ready ? timeline.segments.length : 0}
      data-failovers={ready ? timeline.failovers.length : 0}
    >
      <div className={styles.timelineHead}>
        <h3 id="holder-timeline-title">Holders</h3>
        {note ? <span className="muted" style={{ fontSize: 12 }}>{note}</span> : null}
      </div>
      <div className={styles.track} role="img" aria-label="Holder timeline: who held the lease when over the chosen range">
        {loading ? <div className={styles.timelineEmpty}>Loading…</div> : null}
        {error ? <div className={`${styles.timelineEmpty} bad-text`}>{error}</div> : null}
        {ready && timeline.segments.length === 0 && timeline.gaps.every((g) => g.kind === 'free') ? (
          <div className={styles.timelineEmpty}>Nobody held the lease in this range.</div>
        ) : null}
        {ready
          ? timeline.gaps
              .filter((gap) => gap.kind === 'unobserved')
              .map((gap) => (
                <div
                  key={`gap-${gap.from}`}
                  className={styles.unobserved}
                  data-testid="timeline-gap"
                  data-kind={gap.kind}
                  style={{ left: left(gap.from), width: width(gap.from, gap.to) }}
                  title={`Not observed: ${formatInstant(gap.from)} → ${formatInstant(gap.to)} (${formatDuration(gap.to - gap.from)}). What happened in between is not known.`}
                />
              ))
          : null}
        {ready
          ? timeline.segments.map((segment, index) => (
              <div
                key={`${segment.from}-${segment.holder}-${index}`}
                className={`${styles.segment} ${SHADES[holders.get(segment.holder)! % SHADES.length]}${segment.endedBy === null ? ` ${styles.current}` : ''}`}
                data-testid="timeline-segment"
                data-holder={segment.holder}
                data-ended-by={segment.endedBy ?? 'held'}
                style={{ left: left(segment.from), width: width(segment.from, segment.to) }}
                title={`${segment.holder}${segment.token !== null ? ` · token ${segment.token}` : ' · unfenced'}\n${
                  segment.startsBeforeRange ? 'since before the range' : formatInstant(segment.from)
                } → ${segment.endedBy === null ? 'still held' : formatInstant(segment.to)} (${formatDuration(segment.to - segment.from)})${
                  segment.endedBy ? `\nended: ${END_TEXT[segment.endedBy]}` : ''
                }`}
              >
                {segment.holder}
              </div>
            ))
          : null}
        {ready
          ? timeline.failovers.map((failover, index) => (
              <div
                key={`failover-${failover.at}-${index}`}
                className={styles.failover}
                data-testid="timeline-failover"
                style={{ left: left(failover.at) }}
                title={`Failover at ${formatInstant(failover.at)}: ${failover.from} → ${failover.to} (${END_TEXT[failover.cause]}${
                  failover.gapMs !== null ? `, ${formatDuration(failover.gapMs)} without a holder` : ', time without a holder unknown'
                })`}
              />
            ))
          : null}
      </div>
      <div className={styles.axis} aria-hidden="true">
        {timeline
          ? timeTicks(start, end).map((tick) => (
              <span key={tick} style={{ left: left(tick) }}>
                {formatTick(tick, span)}
              </span>
            ))
          : null}
      </div>
      <ul className={styles.timelineLegend} aria-hidden="true">
        <li>
          <span className={`${styles.legendBox} ${styles.shade0}`} /> held (one shade per holder; outlined: current grant)
        </li>
        <li>
          <span className={styles.legendFailover} /> failover
        </li>
        <li>
          <span className={styles.legendBox} style={{ background: 'var(--bg)' }} /> no holder
        </li>
        <li>
          <span className={`${styles.legendBox} ${styles.unobserved}`} style={{ position: 'static' }} /> not observed
        </li>
      </ul>
      <p id="holder-timeline-summary" style={{ margin: '6px 0 0', fontSize: 13 }}>
        {summary}
      </p>
      {ready && timeline.segments.length > 0 ? (
        <details className={styles.segmentList}>
          <summary>List the {timeline.segments.length === 1 ? 'grant' : `${timeline.segments.length} grants`} and failovers</summary>
          <div className="table-scroll">
            <table className="data" aria-label="Grants in the chosen range">
              <thead>
                <tr>
                  <th scope="col">Holder</th>
                  <th scope="col">Token</th>
                  <th scope="col">From (UTC)</th>
                  <th scope="col">To (UTC)</th>
                  <th scope="col">Held for</th>
                  <th scope="col">Ended</th>
                </tr>
              </thead>
              <tbody>
                {timeline.segments.map((segment, index) => (
                  <tr key={`${segment.from}-${index}`}>
                    <td className="mono">{segment.holder}</td>
                    <td className="mono">{segment.token ?? 'unfenced'}</td>
                    <td className="mono">{segment.startsBeforeRange ? 'before the range' : formatInstant(segment.from)}</td>
                    <td className="mono">{segment.endedBy === null ? '—' : formatInstant(segment.to)}</td>
                    <td className="tabular">{formatDuration(segment.to - segment.from)}</td>
                    <td>{segment.endedBy === null ? 'still held' : END_TEXT[segment.endedBy]}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {timeline.failovers.length > 0 ? (
            <ul style={{ margin: '8px 0 0', paddingLeft: 18 }}>
              {timeline.failovers.map((failover, index) => (
                <li key={`${failover.at}-${index}`}>
                  <span className="mono">{formatInstant(failover.at)}</span>: <span className="mono">{failover.from}</span> → <span className="mono">{failover.to}</span>{' '}
                  ({END_TEXT[failover.cause]}
                  {failover.gapMs !== null ? `, ${formatDuration(failover.gapMs)} without a holder` : ''})
                </li>
              ))}
            </ul>
          ) : null}
        </details>
      ) : null}
    </section>
  );
}
