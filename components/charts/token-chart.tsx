'use client';
// The fencing-token sequence of one lease: every grant's token over time, forced bumps
// marked apart, regressions in red. Tokens may exceed 2^53: they are plotted as Numbers
// (neighbours may then share a height) and shown exactly, as strings, in the tooltip.
import { CartesianGrid, ComposedChart, Line, ReferenceLine, Scatter, Tooltip, XAxis, YAxis, ZAxis, type TooltipContentProps } from 'recharts';
import type { TokenPoint } from '@/lib/domain/holder-timeline';
import { tokenRange } from '@/lib/domain/token-sequence';
import { ChartFrame, type ChartState } from './chart-frame';
import styles from './charts.module.css';
import { formatInstant, formatTick, timeTicks } from './time-axis';

const KIND_TEXT: Record<TokenPoint['kind'], string> = { grant: 'grant', forced: 'forced bump', regression: 'TOKEN REGRESSION' };

/** Above this, tokens are plotted as an exact offset from the lowest one: Numbers would blur them. */
const LARGE = 1_000_000_000n;

type PlottedPoint = TokenPoint & { y: number };

/**
 * Small tokens are plotted as they are. Large ones (etcd revisions, 64-bit counters) are
 * plotted as their distance from the lowest token shown, computed exactly with BigInt: the
 * axis then reads +0, +1, +2 instead of nine identical "9007.2T" labels.
 */
function plot(points: readonly TokenPoint[]): { plotted: PlottedPoint[]; base: bigint | null } {
  const range = tokenRange(points);
  if (!range) return { plotted: [], base: null };
  const { low, high } = range;
  const base = high >= LARGE || low <= -LARGE ? low : null;
  return { plotted: points.map((p) => ({ ...p, y: base === null ? p.value : Number(BigInt(p.token) - base) })), base };
}

function TokenTooltip({ active, payload }: TooltipContentProps) {
  const point = active ? (payload?.[0]?.payload as TokenPoint | undefined) : undefined;
  if (!point) return null;
  return (
    <div className={styles.tooltip}>
      <div className={`${styles.tooltipTitle}${point.kind === 'regression' ? ` ${styles.bad}` : point.kind === 'forced' ? ` ${styles.warn}` : ''}`}>
        {KIND_TEXT[point.kind]} · {point.type.replace(/_/g, ' ')}
      </div>
      <dl>
        <dt>token</dt>
        <dd>{point.token}</dd>
        {point.previousToken !== null ? (
          <>
            <dt>previous</dt>
            <dd>{point.previousToken}</dd>
          </>
        ) : null}
        <dt>holder</dt>
        <dd>{point.holder ?? '—'}</dd>
        <dt>at</dt>
        <dd>{formatInstant(point.at)}</dd>
      </dl>
    </div>
  );
}

export function TokenChart({
  points,
  start,
  end,
  summary,
  state,
  note,
  height = 220,
}: {
  points: readonly TokenPoint[];
  start: number;
  end: number;
  summary: string;
  /** Loading, error or an explained empty chart; otherwise drawn (empty when there are no points). */
  state: ChartState;
  note?: string;
  height?: number;
}) {
  const { plotted, base } = plot(points);
  const grants = plotted.filter((p) => p.kind === 'grant');
  const forced = plotted.filter((p) => p.kind === 'forced');
  const regressions = plotted.filter((p) => p.kind === 'regression');
  const ticks = timeTicks(start, end);
  const span = end - start;
  const shown: ChartState = state.kind === 'ready' && points.length === 0 ? { kind: 'empty', message: 'No grant with a fencing token in this range.' } : state;
  return (
    <ChartFrame
      title="Fencing tokens"
      label="Fencing token sequence chart: each grant's token over time"
      summary={summary}
      note={[base !== null ? `Tokens plotted as their distance from ${base} (exact values in the tooltip).` : null, note].filter(Boolean).join(' ') || undefined}
      height={height}
      state={shown}
      points={state.kind === 'ready' ? points.length : 0}
      testId="token-chart"
      legend={
        <ul className={styles.legend} aria-hidden="true">
          <li>
            <span className={`${styles.dot} ${styles.accent}`} /> grant
          </li>
          <li>
            <span className={`${styles.triangle} ${styles.warn}`} /> forced bump (force-expire / force-release)
          </li>
          <li>
            <span className={`${styles.diamond} ${styles.bad}`} /> token regression
          </li>
        </ul>
      }
    >
      <ComposedChart responsive style={{ width: '100%', height: '100%' }} margin={{ top: 8, right: 12, bottom: 0, left: 4 }}>
        <CartesianGrid vertical={false} strokeDasharray="2 4" />
        <XAxis
          dataKey="at"
          type="number"
          domain={[start, end]}
          ticks={ticks}
          tickFormatter={(value: number) => formatTick(value, span)}
          stroke="var(--border)"
          allowDataOverflow
        />
        <YAxis
          dataKey="y"
          type="number"
          domain={['auto', 'auto']}
          allowDecimals={false}
          tickFormatter={(value: number) => (base === null ? String(value) : `+${value}`)}
          width={base === null ? 64 : 48}
          stroke="var(--border)"
        />
        {/* Symbols a little larger than the default, so a triangle reads as one. */}
        <ZAxis range={[90, 90]} />
        {/* Forced bumps are rare and matter: a dashed line marks each one across the chart. */}
        {forced.slice(-50).map((point, index) => (
          <ReferenceLine key={`forced-${point.at}-${index}`} x={point.at} stroke="var(--warn)" strokeDasharray="3 3" strokeOpacity={0.7} />
        ))}
        <Tooltip content={TokenTooltip} shared={false} cursor={false} isAnimationActive={false} />
        {/* The sequence itself: a step from each token to the next. */}
        <Line data={plotted} dataKey="y" type="stepAfter" stroke="var(--muted)" strokeWidth={1} dot={false} activeDot={false} isAnimationActive={false} tooltipType="none" />
        {/* A series with no data would fall back to the chart's: an empty one is not drawn at all. */}
        {grants.length > 0 ? <Scatter name="grant" data={grants} dataKey="y" fill="var(--accent)" shape="circle" isAnimationActive={false} /> : null}
        {forced.length > 0 ? <Scatter name="forced bump" data={forced} dataKey="y" fill="var(--warn)" shape="triangle" isAnimationActive={false} /> : null}
        {regressions.length > 0 ? (
          <Scatter name="token regression" data={regressions} dataKey="y" fill="var(--bad)" shape="diamond" isAnimationActive={false} />
        ) : null}
      </ComposedChart>
    </ChartFrame>
  );
}
