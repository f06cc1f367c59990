'use client';
// A source's canary renewals over the last hour (GET /api/v1/sources, `canary.minutes`): per
// minute, the median, the p99 and the slowest round trip, under a dashed line at the
// slow_renewals threshold's default (25 % of the canary's TTL) when it is within reach.
import { CartesianGrid, ComposedChart, Line, ReferenceLine, Tooltip, XAxis, YAxis, type TooltipContentProps } from 'recharts';
import type { CanaryView } from '@/lib/domain/schemas';
import { ChartFrame } from './chart-frame';
import styles from './charts.module.css';
import { formatInstant, formatMs, formatTick, marginTicks, timeTicks, unitFor } from './time-axis';

type Row = { at: number; count: number; failed: number; p50: number | null; p99: number | null; max: number | null };

const HOUR_MS = 3_600_000;

/** A round trip as the canary shows it: tenths of a millisecond below 10 ms (a loopback renewal takes about one). */
export const canaryMs = (ms: number | null): string => (ms === null ? '—' : ms < 10 ? `${Number(ms.toFixed(1))} ms` : formatMs(ms, unitFor(ms)));

export function CanaryChart({ canary, end, height = 160 }: { canary: CanaryView; end: number; height?: number }) {
  const start = end - HOUR_MS;
  const rows: Row[] = canary.minutes.map((m) => ({ at: Date.parse(m.minute), count: m.count, failed: m.failed, p50: m.p50Ms, p99: m.p99Ms, max: m.maxMs })).filter((row) => row.at >= start - 60_000);
  const thresholdMs = canary.ttlMs / 4;
  const top = Math.max(1, ...rows.map((row) => row.max ?? 0));
  // The threshold is drawn when the data comes within half of it; otherwise it would squash the lines flat.
  const showThreshold = top >= thresholdMs / 2;
  const yTicks = marginTicks((showThreshold ? Math.max(top, thresholdMs) : top) * 1.08);
  const unit = unitFor(yTicks[yTicks.length - 1]!);
  const renew = canary.calls.renew.hour;
  const summary =
    rows.length === 0
      ? 'No canary renewal in the last hour.'
      : `${renew.count.toLocaleString('en')} renewal${renew.count === 1 ? '' : 's'} in the last hour${renew.failed ? `, ${renew.failed} failed` : ''}: p50 ${canaryMs(renew.p50Ms)}, p99 ${canaryMs(renew.p99Ms)}, slowest ${canaryMs(renew.maxMs)}; slow_renewals fires by default above ${canaryMs(thresholdMs)} at p99.`;

  return (
    <ChartFrame
      title="Canary renewals, last hour"
      label={`Round trips of the canary's renewals per minute over the last hour`}
      summary={summary}
      height={height}
      state={rows.length === 0 ? { kind: 'empty', message: 'No canary renewal in the last hour.' } : { kind: 'ready' }}
      points={rows.length}
      testId="canary-chart"
      legend={
        <ul className={styles.legend} aria-hidden="true">
          <li>
            <span className={`${styles.swatch} ${styles.muted}`} /> p50
          </li>
          <li>
            <span className={`${styles.swatch} ${styles.accent}`} /> p99
          </li>
          <li>
            <span className={`${styles.swatch} ${styles.warn}`} /> slowest
          </li>
          {showThreshold ? (
            <li>
              <span className={`${styles.swatch} ${styles.swatchDashed} ${styles.bad}`} /> 25 % of the TTL
            </li>
          ) : null}
        </ul>
      }
    >
      <ComposedChart responsive style={{ width: '100%', height: '100%' }} data={rows} margin={{ top: 12, right: 12, bottom: 0, left: 4 }}>
        <CartesianGrid vertical={false} strokeDasharray="2 4" />
        <XAxis dataKey="at" type="number" domain={[start, end]} ticks={timeTicks(start, end, 6)} tickFormatter={(value: number) => formatTick(value, HOUR_MS)} stroke="var(--border)" allowDataOverflow />
        <YAxis type="number" domain={[0, yTicks[yTicks.length - 1]!]} ticks={yTicks} tickFormatter={(value: number) => (unit === 'ms' && value < 10 ? canaryMs(value) : formatMs(value, unit))} width={72} stroke="var(--border)" />
        <Tooltip content={MinuteTooltip} cursor={{ stroke: 'var(--border)' }} isAnimationActive={false} />
        {showThreshold ? <ReferenceLine y={thresholdMs} stroke="var(--bad)" strokeDasharray="4 4" ifOverflow="extendDomain" /> : null}
        <Line dataKey="p50" name="p50" stroke="var(--muted)" strokeWidth={1.5} dot={false} connectNulls isAnimationActive={false} />
        <Line dataKey="p99" name="p99" stroke="var(--accent)" strokeWidth={1.5} dot={{ r: 2 }} connectNulls isAnimationActive={false} />
        <Line dataKey="max" name="slowest" stroke="var(--warn)" strokeWidth={1} dot={false} connectNulls isAnimationActive={false} />
      </ComposedChart>
    </ChartFrame>
  );
}

function MinuteTooltip({ active, payload }: TooltipContentProps) {
  const row = active ? (payload?.[0]?.payload as Row | undefined) : undefined;
  if (!row) return null;
  const show = canaryMs;
  return (
    <div className={styles.tooltip}>
      <div className={styles.tooltipTitle}>Minute from {formatInstant(row.at).replace(':00.000 UTC', ' UTC')}</div>
      <dl>
        <dt>renewals</dt>
        <dd>
          {row.count}
          {row.failed > 0 ? ` (${row.failed} failed)` : ''}
        </dd>
        <dt>p50</dt>
        <dd>{show(row.p50)}</dd>
        <dt>p99</dt>
        <dd>{show(row.p99)}</dd>
        <dt>slowest</dt>
        <dd>{show(row.max)}</dd>
      </dl>
    </div>
  );
}
