'use client';
// Failovers over time: one bar per interval of the range, stacked by cause, coloured like the
// causes in the table. Times on the axis are UTC, as everywhere in the console.
import { useMemo } from 'react';
import { Bar, BarChart, CartesianGrid, Tooltip, XAxis, YAxis, type TooltipContentProps } from 'recharts';
import { formatDuration } from '@/lib/domain/duration';
import { bucketFailovers, bucketSizeFor, CAUSE_TEXT, FAILOVER_CAUSES, type FailoverCause, type FailoverRecord } from '@/lib/domain/failover-stats';
import { CAUSE_COLOR } from './cause';
import styles from './failovers.module.css';

type Datum = { start: number; end: number; total: number } & Record<FailoverCause, number>;

const DAY_MS = 86_400_000;
/** Also the height the loading skeleton reserves (failovers.module.css .chartBody). */
const CHART_HEIGHT = 180;
const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);
const dayHhmm = (ms: number) => {
  const iso = new Date(ms).toISOString();
  return `${iso.slice(5, 10)} ${iso.slice(11, 16)}`;
};

function bucketWords(ms: number): string {
  if (ms < 60_000) return `${ms / 1_000} seconds`;
  if (ms < 3_600_000) return ms === 60_000 ? 'minute' : `${ms / 60_000} minutes`;
  if (ms < DAY_MS) return ms === 3_600_000 ? 'hour' : `${ms / 3_600_000} hours`;
  return 'day';
}

export function FailoverChart({ failovers, rangeMs, endMs, rangeText }: { failovers: readonly FailoverRecord[]; rangeMs: number; endMs: number; rangeText: string }) {
  const bucketMs = bucketSizeFor(rangeMs);
  const { data, points, present } = useMemo(() => {
    const buckets = bucketFailovers(failovers, { endMs, rangeMs, bucketMs });
    return {
      data: buckets.map((bucket): Datum => ({ start: bucket.start, end: bucket.end, total: bucket.total, ...bucket.counts })),
      points: buckets.reduce((sum, bucket) => sum + bucket.total, 0),
      present: FAILOVER_CAUSES.filter((cause) => buckets.some((bucket) => bucket.counts[cause] > 0)),
    };
  }, [failovers, endMs, rangeMs, bucketMs]);
  const tick = rangeMs > DAY_MS ? dayHhmm : hhmm;
  const label = `${points} ${points === 1 ? 'failover' : 'failovers'} in ${rangeText}, counted per ${bucketWords(bucketMs)}`;

  return (
    <figure className={`panel ${styles.chartPanel}`} data-testid="failover-chart" data-points={points} aria-label={`Chart: ${label}`}>
      <figcaption className={styles.chartCaption}>
        <span>
          Failovers per {bucketWords(bucketMs)} <span className="muted">(UTC)</span>
        </span>
        <ul className={styles.legend} aria-label="Causes">
          {present.map((cause) => (
            <li key={cause}>
              <span className={styles.swatch} style={{ background: CAUSE_COLOR[cause] }} aria-hidden="true" />
              {CAUSE_TEXT[cause]}
            </li>
          ))}
        </ul>
      </figcaption>
      <div className={styles.chartBody}>
        <BarChart responsive style={{ width: '100%', height: CHART_HEIGHT }} data={data} margin={{ top: 6, right: 8, bottom: 0, left: 0 }} barCategoryGap={1}>
          <CartesianGrid vertical={false} stroke="var(--border)" />
          <XAxis
            dataKey="start"
            tickFormatter={tick}
            minTickGap={28}
            stroke="var(--border)"
            tick={{ fill: 'var(--muted)', fontSize: 11 }}
            tickLine={false}
          />
          <YAxis allowDecimals={false} width={36} stroke="var(--border)" tick={{ fill: 'var(--muted)', fontSize: 11 }} tickLine={false} axisLine={false} />
          <Tooltip
            content={(props: TooltipContentProps) => <ChartTooltip {...props} bucketMs={bucketMs} />}
            cursor={{ fill: 'var(--border)', fillOpacity: 0.5 }}
            isAnimationActive={false}
          />
          {FAILOVER_CAUSES.map((cause) => (
            <Bar key={cause} dataKey={cause} name={CAUSE_TEXT[cause]} stackId="causes" fill={CAUSE_COLOR[cause]} isAnimationActive={false} />
          ))}
        </BarChart>
      </div>
    </figure>
  );
}

function ChartTooltip({ active, payload, bucketMs }: TooltipContentProps & { bucketMs: number }) {
  const datum = payload?.[0]?.payload as Datum | undefined;
  if (!active || !datum) return null;
  const when = bucketMs >= DAY_MS ? `${dayHhmm(datum.start)} UTC, ${formatDuration(bucketMs)}` : `${dayHhmm(datum.start)}–${hhmm(datum.end)} UTC`;
  return (
    <div className={styles.tooltip}>
      <div className={styles.tooltipTitle}>{when}</div>
      <div>
        {datum.total} {datum.total === 1 ? 'failover' : 'failovers'}
      </div>
      {FAILOVER_CAUSES.filter((cause) => datum[cause] > 0).map((cause) => (
        <div key={cause} className={styles.tooltipRow}>
          <span className={styles.swatch} style={{ background: CAUSE_COLOR[cause] }} aria-hidden="true" />
          {CAUSE_TEXT[cause]}: <span className="tabular">{datum[cause]}</span>
        </div>
      ))}
    </div>
  );
}
