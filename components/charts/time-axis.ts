// Time axes for the lease page's charts and timeline: round ticks in UTC (everyone on a
// call reads the same clock), few enough to stay legible.

const STEPS_MS = [
  10_000, 30_000, 60_000, 2 * 60_000, 5 * 60_000, 10 * 60_000, 15 * 60_000, 30 * 60_000, 3_600_000, 2 * 3_600_000, 3 * 3_600_000, 6 * 3_600_000,
  12 * 3_600_000, 86_400_000,
];

/** Round times within [start, end], at most `maxTicks` of them. */
export function timeTicks(start: number, end: number, maxTicks = 7): number[] {
  const span = Math.max(1, end - start);
  const step = STEPS_MS.find((s) => span / s <= maxTicks) ?? Math.ceil(span / maxTicks / 86_400_000) * 86_400_000;
  const ticks: number[] = [];
  for (let t = Math.ceil(start / step) * step; t <= end; t += step) ticks.push(t);
  return ticks;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** "06:05" within a day, "12-02 06:05" across days, "06:05:30" for sub-minute steps. */
export function formatTick(ms: number, spanMs: number): string {
  const d = new Date(ms);
  const hm = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
  if (spanMs > 24 * 3_600_000) return `${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${hm}`;
  if (spanMs <= 10 * 60_000) return `${hm}:${pad(d.getUTCSeconds())}`;
  return hm;
}

/** "2026-12-02 06:05:30.120 UTC": exact, for tooltips and tables. */
export function formatInstant(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(
    d.getUTCMilliseconds(),
    3,
  )} UTC`;
}

/** The same, shorter, when the date is obvious: "12-02 06:05:30.120". */
export function formatShortInstant(ms: number): string {
  const d = new Date(ms);
  return `${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}`;
}

/** The unit a duration reads best in: seconds from 2 s, milliseconds below. */
export const unitFor = (ms: number): 's' | 'ms' => (ms >= 2_000 ? 's' : 'ms');

/** Round ticks from 0 to at least `max`: steps of 1, 2, 2.5 or 5 times a power of ten (0, 500, 1000...), not 0, 538, 1077... */
export function marginTicks(max: number): number[] {
  if (!(max > 0)) return [0, 1];
  const rough = max / 4;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = ([1, 2, 2.5, 5, 10].find((m) => m * power >= rough) ?? 10) * power;
  const ticks = [0];
  while (ticks[ticks.length - 1]! < max) ticks.push(ticks.length * step);
  return ticks;
}

/** Milliseconds as the axis of a renewal chart shows them. */
export function formatMs(ms: number, unit: 's' | 'ms'): string {
  return unit === 's' ? `${Number((ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1))} s` : `${Math.round(ms)} ms`;
}
