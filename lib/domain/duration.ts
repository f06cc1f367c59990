// Durations for people, both ways. Read as people type them: "15s", "30m", "12h", "30d",
// "500ms" (parseDurationMs). Written, the one way Leasehold writes one, for the console, the
// CLI, alert summaries and notifications (formatDuration): "850 ms", "4.2 s", "12 s", "1 min 30 s", "2 h 5 min", "3 d 4 h": at most
// two whole units past a minute, so a forty-day TTL reads as "40 d" and not as "3456000.0 s".

const TYPED_UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^(\d{1,9})(ms|s|m|h|d)$/;

/** Milliseconds, or null when `text` is not a whole number followed by ms, s, m, h or d. */
export function parseDurationMs(text: string): number | null {
  const match = DURATION.exec(text.trim());
  if (!match) return null;
  const ms = Number(match[1]) * TYPED_UNITS[match[2]!]!;
  return Number.isSafeInteger(ms) ? ms : null;
}

const UNITS: readonly [number, string][] = [
  [86_400_000, 'd'],
  [3_600_000, 'h'],
  [60_000, 'min'],
  [1_000, 's'],
];

export type DurationOptions = {
  /**
   * Below this many milliseconds the duration is written in ms (default 1 s). Alert summaries
   * say margins and gaps up to 10 s in ms ("renewed with 1200 ms left"), where a difference of
   * a few hundred ms is the news.
   */
  msBelow?: number;
};

/** A duration in words; negative ones with a "-". Not a finite number: "—". */
export function formatDuration(ms: number, options: DurationOptions = {}): string {
  if (!Number.isFinite(ms)) return '—';
  const sign = ms < 0 ? '-' : '';
  const abs = Math.abs(ms);
  // Each bound is where the rounded text would reach the next form ("1000 ms", "10.0 s").
  if (Math.round(abs) < Math.max(1_000, options.msBelow ?? 1_000)) return `${sign}${Math.round(abs)} ms`;
  if (abs < 9_950) return `${sign}${(abs / 1_000).toFixed(1)} s`;
  if (abs < 59_500) return `${sign}${Math.round(abs / 1_000)} s`;
  const parts: string[] = [];
  let rest = Math.round(abs / 1_000) * 1_000;
  for (const [size, unit] of UNITS) {
    if (rest >= size && parts.length < 2) {
      parts.push(`${Math.floor(rest / size)} ${unit}`);
      rest %= size;
    } else if (parts.length > 0) break;
  }
  return sign + parts.join(' ');
}
