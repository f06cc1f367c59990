'use client';
// What the lease's holders report themselves (POST /api/v1/telemetry): per minute, the
// slowest renewal round trip and the latest a renewal ran against the holder's own schedule,
// beside the backend's view in the renewal chart; and under it, each holder's claim: whether
// it believes it holds the lease, with which token, since when.
import { CartesianGrid, ComposedChart, Line, Tooltip, XAxis, YAxis, type TooltipContentProps } from 'recharts';
import type { HolderTimings } from '@/lib/domain/schemas';
import { ChartFrame, type ChartState } from './chart-frame';
import styles from './charts.module.css';
import { formatInstant, formatMs, formatTick, marginTicks, timeTicks, unitFor } from './time-axis';

type Row = { at: number; rttMax: number; rttAvg: number; lateMax: number | null; count: number; failed: number };

/** The minutes of every holder, merged: the worst of each minute. */
function rowsOf(holders: readonly HolderTimings[]): Row[] {
  const byMinute = new Map<number, Row>();
  for (const holder of holders) {
    for (const m of holder.minutes) {
      const at = Date.parse(m.minute);
      const row = byMinute.get(at) ?? { at, rttMax: 0, rttAvg: 0, lateMax: null, count: 0, failed: 0 };
      row.rttAvg = (row.rttAvg * row.count + m.rttAvgMs * m.count) / Math.max(1, row.count + m.count);
      row.count += m.count;
      row.failed += m.failed;
      row.rttMax = Math.max(row.rttMax, m.rttMaxMs);
      if (m.lateMaxMs !== null) row.lateMax = Math.max(row.lateMax ?? 0, m.lateMaxMs);
      byMinute.set(at, row);
    }
  }
  return [...byMinute.values()].sort((a, b) => a.at - b.at);
}

export function HolderChart({ holders, start, end, state, height = 180 }: { holders: readonly HolderTimings[]; start: number; end: number; state: ChartState; height?: number }) {
  const rows = rowsOf(holders).filter((row) => row.at >= start - 60_000 && row.at <= end);
  const top = Math.max(1, ...rows.flatMap((row) => [row.rttMax, row.lateMax ?? 0]));
  const yTicks = marginTicks(top * 1.08);
  const unit = unitFor(top);
  const span = end - start;
  const renewals = rows.reduce((sum, row) => sum + row.count, 0);
  const failed = rows.reduce((sum, row) => sum + row.failed, 0);
  const worstLate = rows.reduce<number | null>((w, row) => (row.lateMax === null ? w : Math.max(w ?? 0, row.lateMax)), null);
  const claiming = holders.filter((holder) => holder.claims);
  const summary =
    rows.length === 0
      ? `No holder-reported renewals in this range; ${claiming.length} of ${holders.length} reporting holder${holders.length === 1 ? '' : 's'} claim it.`
      : `${renewals.toLocaleString('en')} reported renewal${renewals === 1 ? '' : 's'}${failed > 0 ? `, ${failed} failed` : ''}; slowest round trip ${formatMs(
          Math.max(...rows.map((row) => row.rttMax)),
          unit,
        )}; ${worstLate === null ? 'lateness not reported' : `latest ${formatMs(worstLate, unit)} behind schedule`}; ${claiming.length} of ${holders.length} holder${holders.length === 1 ? '' : 's'} claim it.`;
  const shown: ChartState = state.kind === 'ready' && rows.length === 0 ? { kind: 'empty', message: 'No holder reported a renewal in this range.' } : state;

  return (
    <ChartFrame
      title="As its holders see it"
      label="Holder-reported renewals: the slowest round trip and the largest lateness per minute"
      summary={summary}
      note={state.kind === 'ready' ? 'Reported by the holders themselves (lib/lease\u2019s reporter): per minute, the slowest renewal round trip and the largest lateness against the holder\u2019s own schedule.' : undefined}
      height={height}
      state={shown}
      points={state.kind === 'ready' ? rows.length : 0}
      testId="holder-chart"
      legend={
        <>
          <ul className={styles.legend} aria-hidden="true">
            <li>
              <span className={`${styles.swatch} ${styles.accent}`} /> slowest round trip
            </li>
            <li>
              <span className={`${styles.swatch} ${styles.warn}`} /> largest lateness
            </li>
          </ul>
          <ul className={styles.claims} data-testid="holder-claims">
            {holders.map((holder) => (
              <li key={holder.holder}>
                <span className={holder.claims ? styles.claiming : styles.notClaiming}>{holder.claims ? 'claims it' : 'does not claim it'}</span>{' '}
                <span className={styles.claimHolder}>{holder.holder}</span>
                {holder.token !== null ? ` · token ${holder.token}` : ''}
                {holder.claimsSince ? ` · since ${formatInstant(Date.parse(holder.claimsSince))}` : ''} · last report {formatInstant(Date.parse(holder.reportedAt))}
              </li>
            ))}
          </ul>
        </>
      }
    >
      <ComposedChart responsive style={{ width: '100%', height: '100%' }} data={rows} margin={{ top: 12, right: 12, bottom: 0, left: 4 }}>
        <CartesianGrid vertical={false} strokeDasharray="2 4" />
        <XAxis dataKey="at" type="number" domain={[start, end]} ticks={timeTicks(start, end)} tickFormatter={(value: number) => formatTick(value, span)} stroke="var(--border)" allowDataOverflow />
        <YAxis type="number" domain={[0, yTicks[yTicks.length - 1]!]} ticks={yTicks} tickFormatter={(value: number) => formatMs(value, unit)} width={72} stroke="var(--border)" />
        <Tooltip content={MinuteTooltip} cursor={{ stroke: 'var(--border)' }} isAnimationActive={false} />
        <Line dataKey="rttMax" name="slowest round trip" stroke="var(--accent)" strokeWidth={1.5} dot={{ r: 2 }} isAnimationActive={false} />
        <Line dataKey="lateMax" name="largest lateness" stroke="var(--warn)" strokeWidth={1.5} dot={{ r: 2 }} connectNulls isAnimationActive={false} />
      </ComposedChart>
    </ChartFrame>
  );
}


function MinuteTooltip({ active, payload }: TooltipContentProps) {
  const row = active ? (payload?.[0]?.payload as Row | undefined) : undefined;
  if (!row) return null;
  return (
    <div className={styles.tooltip}>
      <div className={styles.tooltipTitle}>Minute from {formatInstant(row.at).replace(':00.000 UTC', ' UTC')}</div>
      <dl>
        <dt>renewals</dt>
        <dd>
          {row.count}
          {row.failed > 0 ? ` (${row.failed} failed)` : ''}
        </dd>
        <dt>mean round trip</dt>
        <dd>{formatMs(row.rttAvg, unitFor(row.rttAvg))}</dd>
        <dt>slowest round trip</dt>
        <dd>{formatMs(row.rttMax, unitFor(row.rttMax))}</dd>
        <dt>largest lateness</dt>
        <dd>{row.lateMax === null ? 'not reported' : formatMs(row.lateMax, unitFor(row.lateMax))}</dd>
      </dl>
    </div>
  );
}
