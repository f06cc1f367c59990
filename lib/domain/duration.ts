// Durations as people type them: "15s", "30m", "12h", "30d", "500ms".

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^(\d{1,9})(ms|s|m|h|d)$/;

/** Milliseconds, or null when `text` is not a whole number followed by ms, s, m, h or d. */
export function parseDurationMs(text: string): number | null {
  const match = DURATION.exec(text.trim());
  if (!match) return null;
  const ms = Number(match[1]) * UNITS[match[2]!]!;
  return Number.isSafeInteger(ms) ? ms : null;
}
