// How the alerts page words what it shows. Keys, holders, reasons and errors come from
// backends and people: hostile (10 kB long, control and bidi characters), so every such text
// goes through fieldText (lib/alerts/deliver/formats/text.ts, the formats' own helper):
// control, bidi and invisible characters become \uNNNN, and it is cut to a length people read.
import { fieldText } from '@/lib/alerts/deliver/formats/text';
import { RULE_DEFAULTS } from '@/lib/domain/alert-rule-model';
import { ALERT_RULE_TYPES, type AlertRuleType } from '@/lib/domain/alert-types';
import type { BadgeTone } from '../ui/badge';

/** Hostile text made printable and cut to `max` characters. */
export const shown = (value: string | null | undefined, max = 200) => fieldText(value, max);

export const SEVERITY_TONE: Record<string, BadgeTone> = { critical: 'bad', warning: 'warn', info: 'muted' };

export const isRuleType = (type: string): type is AlertRuleType => (ALERT_RULE_TYPES as readonly string[]).includes(type);

/** "850 ms", "30 s", "5 min", "1 h 30 min", "2 d": whole units, for parameters, margins, gaps and durations. */
export function humanMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  const sign = ms < 0 ? '-' : '';
  const abs = Math.abs(ms);
  if (abs < 1_000) return `${sign}${Math.round(abs)} ms`;
  if (abs < 60_000) return `${sign}${Number((abs / 1_000).toFixed(abs < 10_000 ? 1 : 0))} s`;
  const parts: string[] = [];
  const units: [number, string][] = [
    [86_400_000, 'd'],
    [3_600_000, 'h'],
    [60_000, 'min'],
    [1_000, 's'],
  ];
  let rest = Math.round(abs / 1_000) * 1_000;
  for (const [size, unit] of units) {
    if (rest >= size && parts.length < 2) {
      parts.push(`${Math.floor(rest / size)} ${unit}`);
      rest %= size;
    } else if (parts.length > 0) break;
  }
  return sign + parts.join(' ');
}

/** What a duration typed as "1h" or "90s" is, for the forms: the shape parseDurationMs reads. */
export const DURATION_HINT = 'a number and a unit: 30s, 10m, 1h, 2d';

/** A rule's parameters in words, its type's defaults filled in: "after 30 s", "margin under 20 %". */
export function paramWords(type: string, params: Record<string, unknown>): string[] {
  const merged: Record<string, unknown> = { ...(isRuleType(type) ? RULE_DEFAULTS[type].params : {}), ...params };
  if (Object.keys(merged).length === 0) return ['none'];
  return Object.entries(merged).map(([key, value]) => {
    const num = typeof value === 'number' ? value : null;
    switch (key) {
      case 'marginPercent':
        return `less than ${num ?? '?'} % of the TTL left`;
      case 'changes':
        return `more than ${num ?? '?'} changes`;
      case 'windowMs':
        return `within ${humanMs(num)}`;
      case 'afterMs':
        return `for longer than ${humanMs(num)}`;
      case 'includeLocks':
        return value === true ? 'locks too' : 'elections only';
      case 'resolveAfterMs':
        return `resolves after ${humanMs(num)}`;
      default:
        return shown(`${key}: ${JSON.stringify(value) ?? String(value)}`, 80);
    }
  });
}

/** A rule type as people read it: "missed renewal". */
export const typeWords = (type: string) => shown(type.replaceAll('_', ' '), 60);

/** What a scope covers, in words. */
export function scopeWords(scope: string): string {
  if (scope === 'all') return 'every lease and source';
  if (scope.startsWith('source:')) return `source ${shown(scope.slice(7), 120)}`;
  if (scope.startsWith('lease:')) return `leases ${shown(scope.slice(6), 120)}`;
  return shown(scope, 120);
}

/** A delivery's status as a badge tone. */
export const DELIVERY_TONE: Record<string, BadgeTone> = { delivered: 'ok', pending: 'warn', dead: 'bad' };
