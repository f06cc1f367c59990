// Reading what a source reported about its backend (the `detail` of its row) into the sources
// page's panel (lib/domain/schemas/source-panel.ts). The detail is stored JSON written by
// whichever collector version observed the source: a field of the wrong type is read as
// absent, never trusted, and never breaks the page.
import type { PanelCell, SourcePanel } from '../domain/schemas/source-panel';

export type Json = Record<string, unknown>;
export const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
/** A string, or a number written out; null for anything else. */
export const textOf = (value: unknown): string | null => (typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'bigint' ? String(value) : null);
export const flagOf = (value: unknown): boolean | null => (typeof value === 'boolean' ? value : null);

/** A value shown as it is, or — when absent. */
export const cell = (value: string | null | undefined, more: Omit<PanelCell, 'text'> = {}): PanelCell => ({ text: value ?? '—', ...more });

/** Any status a kind has no panel for (a new backend), or one its panel cannot read: its plain values as facts (nested values left out); null when it has none. */
export function plainFactsPanel(detail: unknown): SourcePanel | null {
  if (!isObject(detail)) return null;
  const facts = Object.entries(detail)
    .map(([label, value]) => ({ label, value: typeof value === 'boolean' ? (value ? 'yes' : 'no') : textOf(value) }))
    .filter((fact): fact is { label: string; value: string } => fact.value !== null)
    .map(({ label, value }) => ({ label, value: cell(value) }));
  return facts.length ? { title: null, note: null, facts, table: null } : null;
}
