// How the alerts page words what it shows. Keys, holders, reasons and errors come from
// backends and people: hostile (10 kB long, control and bidi characters), so every such text
// goes through fieldText (lib/alerts/deliver/formats/text.ts, the formats' own helper):
// control, bidi and invisible characters become \uNNNN, and it is cut to a length people read.
import { fieldText } from '@/lib/alerts/deliver/formats/text';
import { formatDuration } from '@/lib/domain/duration';
import { ALERT_RULE_REGISTRY } from '@/lib/domain/alert-rules';
import { ALERT_RULE_TYPES, type AlertRuleType } from '@/lib/domain/alert-types';
import type { BadgeTone } from '../ui/badge';

/** Hostile text made printable and cut to `max` characters. */
export const shown = (value: string | null | undefined, max = 200) => fieldText(value, max);

export const SEVERITY_TONE: Record<string, BadgeTone> = { critical: 'bad', warning: 'warn', info: 'muted' };

export const isRuleType = (type: string): type is AlertRuleType => (ALERT_RULE_TYPES as readonly string[]).includes(type);

/** A parameter, margin, gap or duration in words (lib/domain/duration.ts); none: "—". */
export const humanMs = (ms: number | null | undefined): string => (ms === null || ms === undefined ? '—' : formatDuration(ms));

/** What a duration typed as "1h" or "90s" is, for the forms: the shape parseDurationMs reads. */
export const DURATION_HINT = 'a number and a unit: 30s, 10m, 1h, 2d';

/** A rule's parameters in words, its type's defaults filled in: "for longer than 30 s", "less than 20 % of the TTL left" (the words are the rule module's). */
export function paramWords(type: string, params: Record<string, unknown>): string[] {
  const ruleModule = ALERT_RULE_REGISTRY.get(type);
  const merged: Record<string, unknown> = { ...(ruleModule?.defaults ?? {}), ...params };
  if (Object.keys(merged).length === 0) return ['none'];
  return Object.entries(merged).map(([key, value]) => {
    const field = ruleModule?.fields.find((f) => f.name === key);
    if (!field) return shown(`${key}: ${JSON.stringify(value) ?? String(value)}`, 80);
    if (typeof field.words !== 'string') return field.words[value === true ? 1 : 0];
    const num = typeof value === 'number' ? value : null;
    return field.words.replace('{}', field.kind === 'duration' ? humanMs(num) : `${num ?? '?'}`);
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
