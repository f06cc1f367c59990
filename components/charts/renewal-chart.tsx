'use client';
// How one lease's renewals behave: the interval between renewals and the margin left before
// expiry, against the TTL and the late-renewal threshold. The store keeps the last renewals
// raw (a bounded ring) and every renewal in per-minute rollups: when the range reaches
// further back than the raw ones, the rollups are offered, and the chart says which it shows.
// When holders report their own timings (POST /api/v1/telemetry), their slowest round trip
// and largest lateness per minute are drawn beside what the backend shows.
import { useId, useState } from 'react';
import { CartesianGrid, ComposedChart, Line, ReferenceLine, Tooltip, XAxis, YAxis, type DotItemDotProps, type TooltipContentProps } from 'recharts';
import { LATE_MARGIN_RATIO } from '@/lib/domain/health';
import { ChartFrame, type ChartState } from './chart-frame';
import styles from './charts.module.css';
import { formatInstant, formatMs, formatTick, marginTicks, timeTicks, unitFor } from './time-axis';

export type RenewalSampleInput = { at: string; holder: string | null; intervalMs: number; marginMs: number; ttlMs: number | null };
export type RenewalRollupInput = { minute: string; count: number; intervalP50: number; intervalMax: number; marginMin: number; marginP50: number };

/** Per minute, over every holder that reported: the slowest round trip and the largest lateness (null: none said). */
export type HolderMinuteInput = { minute: string; rttMaxMs: number; lateMaxMs: number | null };

/** Every reporting holder's minutes merged, oldest first: per minute the slowest round trip and the largest lateness of any. */
export function holderMinutesOf(holders: readonly { minutes: readonly { minute: string; rttMaxMs: number; lateMaxMs: number | null }[] }[]): HolderMinuteInput[] {
  const merged = new Map<string, HolderMinuteInput>();
  for (const m of holders.flatMap((h) => h.minutes)) {
    const seen = merged.get(m.minute);
    const late = seen?.lateMaxMs ?? null;
    merged.set(m.minute, { minute: m.minute, rttMaxMs: Math.max(seen?.rttMaxMs ?? 0, m.rttMaxMs), lateMaxMs: m.lateMaxMs === null ? late : Math.max(late ?? 0, m.lateMaxMs) });
  }
  return [...merged.values()].sort((a, b) => Date.parse(a.minute) - Date.parse(b.minute));
}

/** What holders reported of a minute, on the row of that minute (or a row of its own among raw renewals). */
type HolderFields = { holderRtt?: number; holderLate?: number | null };
type RawRow = { at: number; interval: number; margin: number; holder: string | null; late: boolean } & HolderFields;
type RollupRow = { at: number; interval: number; intervalMax: number; marginMin: number; marginP50: number; count: number; late: boolean } & HolderFields;
type HolderRow = { at: number; holderOnly: true } & HolderFields;
type Mode = 'raw' | 'rollup';

const percent = (ms: number, ttl: number | null) => (ttl ? ` (${Math.round((ms / ttl) * 100)}% of TTL)` : '');
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(sorted.length / 2) - 1)] ?? 0;
};

/** Each renewal's margin: red and larger when late. */
function MarginDot(props: DotItemDotProps) {
  if (props.cx === undefined || props.cy === undefined) return null;
  const late = (props.payload as RawRow).late;
  return <circle cx={props.cx} cy={props.cy} r={late ? 3.5 : 2.2} fill={late ? 'var(--bad)' : 'var(--accent)'} stroke="none" />;
}

/** Per minute, only the minutes with a late renewal get a (red) dot. */
function LateMinuteDot(props: DotItemDotProps) {
  if (props.cx === undefined || props.cy === undefined || !(props.payload as RollupRow).late) return null;
  return <circle cx={props.cx} cy={props.cy} r={3.5} fill="var(--bad)" stroke="none" />;
}

export function RenewalChart({
  samples,
  rollups,
  ttlMs,
  start,
  end,
  state,
  emptyMessage = 'No renewals in this range.',
  height = 220,
  holderMinutes = [],
}: {
  /** Oldest first. */
  samples: readonly RenewalSampleInput[];
  /** Oldest first. */
  rollups: readonly RenewalRollupInput[];
  ttlMs: number | null;
  start: number;
  end: number;
  state: ChartState;
  emptyMessage?: string;
  height?: number;
  /** Oldest first; empty when no holder reports. */
  holderMinutes?: readonly HolderMinuteInput[];
}) {
  const [chosen, setChosen] = useState<Mode | null>(null);
  const name = useId();
  const ttl = ttlMs ?? samples.at(-1)?.ttlMs ?? null;
  const threshold = ttl ? ttl * LATE_MARGIN_RATIO : null;

  const firstSampleAt = samples.length > 0 ? Date.parse(samples[0]!.at) : null;
  // Rollups that reach back further than the raw ring: only they cover the start of the range.
  const rollupsReachFurther = rollups.length > 0 && (firstSampleAt === null || Date.parse(rollups[0]!.minute) < firstSampleAt - 60_000);
  const mode: Mode = chosen ?? (rollupsReachFurther ? 'rollup' : 'raw');

  const raw: RawRow[] = samples.map((s) => ({ at: Date.parse(s.at), interval: s.intervalMs, margin: s.marginMs, holder: s.holder, late: threshold !== null && s.marginMs < threshold }));
  const perMinute: RollupRow[] = rollups.map((r) => ({
    at: Date.parse(r.minute),
    interval: r.intervalP50,
    intervalMax: r.intervalMax,
    marginMin: r.marginMin,
    marginP50: r.marginP50,
    count: r.count,
    late: threshold !== null && r.marginMin < threshold,
  }));
  const reported = holderMinutes.map((m) => ({ at: Date.parse(m.minute), holderRtt: m.rttMaxMs, holderLate: m.lateMaxMs }));
  const rows = withHolderMinutes<RawRow | RollupRow>(mode === 'raw' ? raw : perMinute, reported);
  const values = mode === 'raw' ? raw.flatMap((r) => [r.interval, r.margin]) : perMinute.flatMap((r) => [r.interval, r.marginP50, r.marginMin]);
  const top = Math.max(ttl ?? 0, ...values, ...reported.flatMap((r) => [r.holderRtt, r.holderLate ?? 0]), 1);
  const yTicks = marginTicks(top * 1.08);
  const unit = unitFor(top);
  const span = end - start;

  let summary: string;
  let note: string;
  if (mode === 'raw') {
    const margins = raw.map((r) => r.margin);
    const late = raw.filter((r) => r.late).length;
    summary =
      raw.length === 0
        ? 'No raw renewals in this range.'
        : `${raw.length} renewal${raw.length === 1 ? '' : 's'}; margin lowest ${formatMs(Math.min(...margins), unit)}${percent(Math.min(...margins), ttl)}, median ${formatMs(
            median(margins),
            unit,
          )}; interval median ${formatMs(median(raw.map((r) => r.interval)), unit)}; ${late === 0 ? 'none late' : `${late} late`}${
            threshold !== null ? ` (margin under ${Math.round(LATE_MARGIN_RATIO * 100)}% of TTL)` : ''
          }.`;
    note =
      raw.length === 0
        ? 'Each renewal, as observed.'
        : `Each renewal, as observed: the last ${raw.length} the store keeps${firstSampleAt !== null && firstSampleAt > start + 60_000 ? `, since ${formatTick(firstSampleAt, span)} UTC` : ''}.${
            rollupsReachFurther ? ' Older renewals exist only as per-minute rollups.' : ''
          }`;
  } else {
    const renewals = perMinute.reduce((sum, r) => sum + r.count, 0);
    const worst = perMinute.reduce<RollupRow | null>((w, r) => (w === null || r.marginMin < w.marginMin ? r : w), null);
    const lateMinutes = perMinute.filter((r) => r.late).length;
    summary =
      worst === null
        ? 'No renewals in this range.'
        : `${perMinute.length} minute${perMinute.length === 1 ? '' : 's'}, ${renewals.toLocaleString('en')} renewals; lowest margin ${formatMs(worst.marginMin, unit)}${percent(
            worst.marginMin,
            ttl,
          )} at ${formatTick(worst.at, span)} UTC; ${lateMinutes === 0 ? 'no minute with a late renewal' : `${lateMinutes} minute${lateMinutes === 1 ? '' : 's'} with a late renewal`}.`;
    note = 'Per-minute rollups of every renewal: lowest and median margin, median interval.';
  }
  if (reported.length > 0) {
    const lateness = reported.flatMap((r) => (r.holderLate === null ? [] : [r.holderLate]));
    // In their own unit: a holder's milliseconds beside a TTL of minutes would read "0 s".
    const own = (ms: number) => formatMs(ms, unitFor(ms));
    summary += ` As its holders see it: slowest round trip ${own(Math.max(...reported.map((r) => r.holderRtt)))}${
      lateness.length > 0 ? `, largest lateness ${own(Math.max(...lateness))}` : ''
    } (per minute, from their own reports).`;
  }

  const shown: ChartState = state.kind === 'ready' && rows.length === 0 ? { kind: 'empty', message: emptyMessage } : state;
  const canChoose = raw.length > 0 && perMinute.length > 0;

  return (
    <ChartFrame
      title="Renewals"
      label="Renewal chart: interval between renewals and margin before expiry over time, with the TTL and the late-renewal threshold"
      summary={summary}
      note={state.kind === 'ready' ? note : undefined}
      height={height}
      state={shown}
      points={state.kind === 'ready' ? rows.length : 0}
      testId="renewal-chart"
      controls={
        <fieldset className={styles.modes}>
          <legend>Renewals shown</legend>
          {(['raw', 'rollup'] as const).map((option) => (
            <label key={option}>
              <input
                type="radio"
                name={name}
                value={option}
                checked={mode === option}
                disabled={!canChoose && mode !== option}
                onChange={() => setChosen(option)}
              />
              {option === 'raw' ? 'Each renewal' : 'Per minute'}
            </label>
          ))}
        </fieldset>
      }
      legend={
        <ul className={styles.legend} aria-hidden="true">
          <li>
            <span className={`${styles.swatch} ${styles.accent}`} /> {mode === 'raw' ? 'margin before expiry' : 'median margin'}
          </li>
          {mode === 'rollup' ? (
            <li>
              <span className={`${styles.swatch} ${styles.warn}`} /> lowest margin
            </li>
          ) : null}
          <li>
            <span className={`${styles.swatch} ${styles.swatchDashed} ${styles.muted}`} /> {mode === 'raw' ? 'interval between renewals' : 'median interval'}
          </li>
          <li>
            <span className={`${styles.swatch} ${styles.swatchDashed} ${styles.textColor}`} /> TTL
          </li>
          <li>
            <span className={`${styles.swatch} ${styles.swatchDashed} ${styles.bad}`} /> late below {Math.round(LATE_MARGIN_RATIO * 100)}% of TTL
          </li>
          <li>
            <span className={`${styles.dot} ${styles.bad}`} /> late renewal
          </li>
          {reported.length > 0 ? (
            <>
              <li>
                <span className={`${styles.swatch} ${styles.ok}`} /> holders: slowest round trip
              </li>
              <li>
                <span className={`${styles.swatch} ${styles.swatchDashed} ${styles.ok}`} /> holders: largest lateness
              </li>
            </>
          ) : null}
        </ul>
      }
    >
      <ComposedChart responsive style={{ width: '100%', height: '100%' }} data={rows} margin={{ top: 12, right: 12, bottom: 0, left: 4 }}>
        <CartesianGrid vertical={false} strokeDasharray="2 4" />
        <XAxis
          dataKey="at"
          type="number"
          domain={[start, end]}
          ticks={timeTicks(start, end)}
          tickFormatter={(value: number) => formatTick(value, span)}
          stroke="var(--border)"
          allowDataOverflow
        />
        <YAxis
          type="number"
          domain={[0, yTicks[yTicks.length - 1]!]}
          ticks={yTicks}
          tickFormatter={(value: number) => formatMs(value, unit)}
          width={64}
          stroke="var(--border)"
          allowDataOverflow
        />
        <Tooltip content={mode === 'raw' ? RawTooltip : RollupTooltip} cursor={{ stroke: 'var(--border)' }} isAnimationActive={false} />
        {ttl ? <ReferenceLine y={ttl} stroke="var(--text)" strokeDasharray="6 4" strokeOpacity={0.7} label={{ value: `TTL ${formatMs(ttl, unit)}`, position: 'insideTopRight', fill: 'var(--muted)', fontSize: 11 }} /> : null}
        {threshold ? (
          <ReferenceLine
            y={threshold}
            stroke="var(--bad)"
            strokeDasharray="4 4"
            label={{ value: `late < ${formatMs(threshold, unit)}`, position: 'insideBottomRight', fill: 'var(--bad)', fontSize: 11 }}
          />
        ) : null}
        <Line dataKey="interval" name={mode === 'raw' ? 'interval' : 'median interval'} stroke="var(--muted)" strokeDasharray="4 3" dot={false} connectNulls isAnimationActive={false} />
        {mode === 'raw' ? (
          <Line dataKey="margin" name="margin" stroke="var(--accent)" strokeWidth={1.5} dot={MarginDot} connectNulls isAnimationActive={false} />
        ) : (
          <>
            <Line dataKey="marginP50" name="median margin" stroke="var(--accent)" strokeWidth={1.5} dot={false} connectNulls isAnimationActive={false} />
            <Line dataKey="marginMin" name="lowest margin" stroke="var(--warn)" strokeWidth={1.5} dot={LateMinuteDot} connectNulls isAnimationActive={false} />
          </>
        )}
        {reported.length > 0 ? (
          <>
            <Line dataKey="holderRtt" name="holders: slowest round trip" stroke="var(--ok)" strokeWidth={1.5} dot={{ r: 2 }} connectNulls isAnimationActive={false} />
            <Line dataKey="holderLate" name="holders: largest lateness" stroke="var(--ok)" strokeDasharray="4 3" strokeWidth={1.5} dot={false} connectNulls isAnimationActive={false} />
          </>
        ) : null}
      </ComposedChart>
    </ChartFrame>
  );
}


/** The rows in time order, each holder minute on the row of that minute when there is one, else on a row of its own. */
function withHolderMinutes<R extends { at: number } & HolderFields>(rows: readonly R[], reported: readonly ({ at: number } & HolderFields)[]): (R | HolderRow)[] {
  if (reported.length === 0) return [...rows];
  const byAt = new Map<number, R | HolderRow>(rows.map((row) => [row.at, { ...row }]));
  for (const minute of reported) {
    const row = byAt.get(minute.at);
    if (row) Object.assign(row, { holderRtt: minute.holderRtt, holderLate: minute.holderLate });
    else byAt.set(minute.at, { ...minute, holderOnly: true });
  }
  return [...byAt.values()].sort((a, b) => a.at - b.at);
}

/** A minute as its holders reported it. */
function HolderLines({ row }: { row: HolderFields }) {
  if (row.holderRtt === undefined) return null;
  return (
    <>
      <dt>holders' slowest round trip</dt>
      <dd>{formatMs(row.holderRtt, unitFor(row.holderRtt))}</dd>
      {row.holderLate !== null && row.holderLate !== undefined ? (
        <>
          <dt>holders' largest lateness</dt>
          <dd>{formatMs(row.holderLate, unitFor(row.holderLate))}</dd>
        </>
      ) : null}
    </>
  );
}

function RawTooltip({ active, payload }: TooltipContentProps) {
  const row = active ? (payload?.[0]?.payload as RawRow | HolderRow | undefined) : undefined;
  if (!row) return null;
  if ('holderOnly' in row) {
    return (
      <div className={styles.tooltip}>
        <div className={styles.tooltipTitle}>Minute from {formatInstant(row.at).replace(':00.000 UTC', ' UTC')}, as its holders report it</div>
        <dl>
          <HolderLines row={row} />
        </dl>
      </div>
    );
  }
  return (
    <div className={styles.tooltip}>
      <div className={`${styles.tooltipTitle}${row.late ? ` ${styles.bad}` : ''}`}>{row.late ? 'Late renewal' : 'Renewal'}</div>
      <dl>
        <dt>at</dt>
        <dd>{formatInstant(row.at)}</dd>
        <dt>holder</dt>
        <dd>{row.holder}</dd>
        <dt>margin</dt>
        <dd>{formatMs(row.margin, unitFor(row.margin))}</dd>
        <dt>interval</dt>
        <dd>{formatMs(row.interval, unitFor(row.interval))}</dd>
        <HolderLines row={row} />
      </dl>
    </div>
  );
}

function RollupTooltip({ active, payload }: TooltipContentProps) {
  const found = active ? (payload?.[0]?.payload as RollupRow | HolderRow | undefined) : undefined;
  if (!found) return null;
  if ('holderOnly' in found) return RawTooltip({ active, payload } as TooltipContentProps);
  const row = found;
  return (
    <div className={styles.tooltip}>
      <div className={`${styles.tooltipTitle}${row.late ? ` ${styles.bad}` : ''}`}>Minute from {formatInstant(row.at).replace(':00.000 UTC', ' UTC')}</div>
      <dl>
        <dt>renewals</dt>
        <dd>{row.count}</dd>
        <dt>lowest margin</dt>
        <dd>{formatMs(row.marginMin, unitFor(row.marginMin))}</dd>
        <dt>median margin</dt>
        <dd>{formatMs(row.marginP50, unitFor(row.marginP50))}</dd>
        <dt>median interval</dt>
        <dd>{formatMs(row.interval, unitFor(row.interval))}</dd>
        <dt>longest interval</dt>
        <dd>{formatMs(row.intervalMax, unitFor(row.intervalMax))}</dd>
        <HolderLines row={row} />
      </dl>
    </div>
  );
}
