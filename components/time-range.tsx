'use client';
// The time range shared by the pages: kept in the URL as ?range=, so it survives a reload and
// travels with a link from one page to another.
import { createContext, useContext } from 'react';
import { useUrlState } from './live/url-state';

export const RANGES = [
  { value: '5m', label: 'Last 5 minutes', ms: 5 * 60_000 },
  { value: '15m', label: 'Last 15 minutes', ms: 15 * 60_000 },
  { value: '1h', label: 'Last hour', ms: 3_600_000 },
  { value: '6h', label: 'Last 6 hours', ms: 6 * 3_600_000 },
  { value: '24h', label: 'Last 24 hours', ms: 24 * 3_600_000 },
  { value: '7d', label: 'Last 7 days', ms: 7 * 24 * 3_600_000 },
] as const;
export type RangeValue = (typeof RANGES)[number]['value'];
export const DEFAULT_RANGE: RangeValue = '1h';

export function parseRange(raw: string | null, fallback: RangeValue = DEFAULT_RANGE): (typeof RANGES)[number] {
  return RANGES.find((range) => range.value === raw) ?? RANGES.find((range) => range.value === fallback)!;
}

/**
 * The shortest range that shows everything observed over `observedMs`, and never less than 5
 * minutes: a lease first seen two minutes ago is drawn across the chart, not squeezed into
 * the right edge of a quarter of an hour.
 */
export function rangeCovering(observedMs: number): RangeValue {
  return (RANGES.find((range) => range.ms >= observedMs) ?? RANGES.at(-1)!).value;
}

/** The range a page shows when the URL names none (the lease page: what was observed of the lease). */
const RangeDefault = createContext<RangeValue>(DEFAULT_RANGE);
export const RangeDefaultProvider = RangeDefault.Provider;

export function useTimeRange() {
  const fallback = useContext(RangeDefault);
  const [params, set] = useUrlState();
  const range = parseRange(params.get('range'), fallback);
  return { range, setRange: (value: RangeValue) => set({ range: value === fallback ? null : value }) };
}

export function TimeRangePicker() {
  const { range, setRange } = useTimeRange();
  return (
    <label className="control">
      <span>Time range</span>
      <select value={range.value} onChange={(event) => setRange(event.target.value as RangeValue)}>
        {RANGES.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
    </label>
  );
}
