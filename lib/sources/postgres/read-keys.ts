// A targeted read of some leases of a PostgreSQL source (LeaseSource.readKeys): the collector
// asks for one when a lease's deadline passes without a renewal seen (lib/alerts/deadlines.ts),
// so that a missed renewal is confirmed at once instead of at the next poll. Each table is read
// for the named rows only when every name can be matched exactly in SQL (a plain text, not the
// head-and-digest form of a long one); otherwise the table is read whole and filtered here.
// Advisory locks are read whole (pg_locks is small and has no index to use).
import type { PgPoolClientLike } from '../../db/pg-like';
import { unescapeText } from '../../domain/display';
import type { Observation } from '../../domain/observe';
import type { PostgresSourceState } from './connection';
import { PartUnreadableError } from './part-errors';
import { readAdvisory } from './advisory';
import { readTable } from './tables';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The text a key's name part stands for, or null when it cannot be matched in SQL exactly. */
function sqlName(exact: string): string | null {
  const bytes = unescapeText(exact);
  if (!bytes) return null;
  try {
    const text = utf8.decode(bytes);
    return text.includes('\u0000') ? null : text;
  } catch {
    return null;
  }
}

export async function readKeysOf(state: PostgresSourceState, client: PgPoolClientLike, keys: string[]): Promise<{ covered: string[]; observations: Observation[] }> {
  const wanted = new Set(keys);
  const covered: string[] = [];
  const observations: Observation[] = [];
  const take = (found: Observation[], part: string[]) => {
    covered.push(...part);
    for (const o of found) if (wanted.has(o.key)) observations.push(o);
  };
  // Longest table name first: "app.leases" before "app".
  const tables = [...state.config.tables].sort((a, b) => b.table.length - a.table.length);
  const byTable = new Map<(typeof tables)[number], string[]>();
  const advisory: string[] = [];
  for (const key of wanted) {
    const table = tables.find((t) => key.startsWith(`${t.table}/`));
    if (table) byTable.set(table, [...(byTable.get(table) ?? []), key]);
    else if (state.config.advisoryLocks && key.startsWith('advisory/')) advisory.push(key);
    // Any other key is no lease of this source: not covered, so nothing is concluded of it.
  }
  for (const [{ table, format }, part] of byTable) {
    const names = part.map((key) => sqlName(key.slice(table.length + 1)));
    try {
      const { observations: found } = await readTable(state, client, table, format, names.every((n) => n !== null) ? (names as string[]) : undefined);
      take(found, part);
    } catch (error) {
      // A table that cannot be read now says nothing of its leases: they are not covered.
      if (!(error instanceof PartUnreadableError)) throw error;
    }
  }
  if (advisory.length > 0) {
    try {
      take(await readAdvisory(state.config.name, client), advisory);
    } catch (error) {
      if (!(error instanceof PartUnreadableError)) throw error;
    }
  }
  return { covered, observations };
}
