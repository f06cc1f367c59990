// Reading one lease table (Leasehold's layout or ShedLock's): its layout checked, its rows
// read in one query and each row judged alone, so that a hostile value costs its own row,
// and a table that cannot be read costs that table only (PartUnreadableError).
import type { PgPoolClientLike } from '../../db/pg-like';
import { redactUrlPassword } from '../../redact';
import { displayText } from '../../domain/display';
import { unreadableObservation, type Observation } from '../../domain/observe';
import { SourceUnavailableError } from '../errors';
import { exactOf, exactOfHead } from '../exact';
import type { PostgresSourceState } from './connection';
import { onlyThisPart, PartUnreadableError, unavailable } from './part-errors';
import { EXPECTED_COLUMNS, MAX_TOKEN_DIGITS, tableQuery, TIME_COLUMNS, TIME_TYPES, type TableRow } from './table-query';
import { breathe, ITEMS_PER_BREATH } from '../../time/clock';

/** A bounded text column's exact text (lib/domain/display.ts). */
function exactColumn(text: string, bytes: number | null, digest: string | null): string {
  return digest === null ? exactOf(text) : exactOfHead(Buffer.from(text, 'utf8'), bytes ?? 0, `sha256:${digest.slice(0, 32)}`);
}

/** One row as a lease, judged alone: what cannot be interpreted makes it `unknown`, with the reason. */
function judgeRow(table: string, format: 'leasehold' | 'shedlock', row: TableRow): Observation {
  const key = `${table}/${exactColumn(row.name!, row.name_bytes, row.name_digest)}`;
  const holder = row.holder === null || row.holder === '' ? null : exactColumn(row.holder, row.holder_bytes, row.holder_digest);
  const unknown = (problem: string): Observation => ({ key, kind: 'lock', holder, token: null, ttlMs: null, remainingMs: null, candidates: [], problem });
  let token: bigint | null = null;
  if (row.token !== null) {
    if (!/^-?\d+$/.test(row.token) || row.token.replace('-', '').length > MAX_TOKEN_DIGITS) {
      return unknown(
        row.token.length > MAX_TOKEN_DIGITS
          ? `the token has more than ${MAX_TOKEN_DIGITS} digits: Leasehold reads tokens up to 2^256`
          : `the token column holds "${displayText(row.token, 40)}", not a whole number`,
      );
    }
    token = BigInt(row.token);
  }
  // An expiry of 'infinity' never comes: held until the row changes; '-infinity' is long past.
  const expiry = format === 'leasehold' ? 'expires_at' : 'lock_until';
  let remainingMs = row.remaining_ms === null ? null : Math.round(row.remaining_ms);
  const detail: Record<string, unknown> = {};
  if (row.expiry_infinite === 'infinity') {
    remainingMs = null;
    detail.expiry = `${expiry} is 'infinity': held until the row changes`;
  } else if (row.expiry_infinite === '-infinity') {
    remainingMs = -1;
    detail.expiry = `${expiry} is '-infinity'`;
  } else if (remainingMs === null && holder !== null) {
    return unknown(`${expiry} is NULL: when the lease ends is not known`);
  }
  return {
    key,
    kind: 'lock',
    holder,
    token,
    ttlMs: row.ttl_ms === null ? null : Math.round(row.ttl_ms),
    remainingMs,
    // Leasehold's release sets owner NULL; ShedLock's moves lock_until back to now.
    released: row.holder === null,
    candidates: [],
    ...(Object.keys(detail).length ? { detail } : {}),
  };
}

/** The table's timestamp columns without a time zone, once its layout is checked (and remembered). PartUnreadableError when it is not in the layout. */
export async function layoutOf(state: PostgresSourceState, client: PgPoolClientLike, table: string, format: 'leasehold' | 'shedlock'): Promise<Set<string>> {
  const { config, layouts } = state;
  const known = layouts.get(table);
  if (known) return known;
  const [schema, name] = table.includes('.') ? table.split('.') : [null, table];
  const { rows } = await client.query<{ column_name: string; data_type: string }>(
    `SELECT column_name, data_type FROM information_schema.columns
      WHERE table_schema = COALESCE($1, current_schema()) AND table_name = $2`,
    [schema, name],
  );
  if (rows.length === 0) {
    throw new PartUnreadableError(config.name, `table ${table} (format ${format}) does not exist, or this user cannot see it`);
  }
  const found = new Map(rows.map((r) => [r.column_name, r.data_type]));
  const missing = EXPECTED_COLUMNS[format].filter((column) => !found.has(column));
  if (missing.length > 0) {
    throw new PartUnreadableError(
      config.name,
      `table ${table} is not in the ${format} layout: it has no column ${missing.join(', ')} (expected ${EXPECTED_COLUMNS[format].join(', ')}; found ${[...found.keys()].slice(0, 20).map((c) => displayText(c, 40)).join(', ')})`,
    );
  }
  const untimely = TIME_COLUMNS[format].filter((column) => !TIME_TYPES.has(found.get(column)!));
  if (untimely.length > 0) {
    throw new PartUnreadableError(
      config.name,
      `table ${table} is not in the ${format} layout: ${untimely.map((c) => `${c} is of type ${displayText(found.get(c)!, 40)}`).join(', ')} (expected a timestamp)`,
    );
  }
  const withoutZone = new Set([...found].filter(([, type]) => type === 'timestamp without time zone' || type === 'date').map(([column]) => column));
  layouts.set(table, withoutZone);
  return withoutZone;
}

/** The table's leases; `nameless`: rows with a NULL name, which cannot be told apart and are counted instead. */
export async function readTable(
  state: PostgresSourceState,
  client: PgPoolClientLike,
  table: string,
  format: 'leasehold' | 'shedlock',
  /** Only the rows of these names (exact text values), for a targeted read. */
  names?: string[],
): Promise<JudgedRows> {
  let rows: TableRow[];
  try {
    const layout = await layoutOf(state, client, table, format);
    rows = (names ? await client.query<TableRow>(tableQuery(table, format, layout, 'named'), [names]) : await client.query<TableRow>(tableQuery(table, format, layout))).rows;
  } catch (error) {
    throw tableFailure(state, table, format, error);
  }
  return judgeRows(table, format, rows);
}

/** Why a table could not be read: that table only (PartUnreadableError), or the whole read. Its layout is checked again next time. */
export function tableFailure(state: PostgresSourceState, table: string, format: 'leasehold' | 'shedlock', error: unknown): SourceUnavailableError {
  state.layouts.delete(table);
  if (error instanceof SourceUnavailableError) return error;
  if (onlyThisPart(error)) {
    return new PartUnreadableError(state.config.name, `table ${table} (format ${format}): ${redactUrlPassword((error as Error).message)}`, { cause: error });
  }
  return unavailable(state.config.name, error, `reading table ${table}`);
}

/** Rows judged one by one (also a poll's changed rows: delta.ts). */
export type JudgedRows = { observations: Observation[]; nameless: number };

export async function judgeRows(table: string, format: 'leasehold' | 'shedlock', rows: readonly TableRow[]): Promise<JudgedRows> {
  const observations: Observation[] = [];
  let nameless = 0;
  for (const [index, row] of rows.entries()) {
    if (index > 0 && index % ITEMS_PER_BREATH === 0) await breathe();
    if (row.name === null) {
      nameless++;
      continue;
    }
    try {
      observations.push(judgeRow(table, format, row));
    } catch (error) {
      // Not expected; if it happens, it costs this row only.
      observations.push(unreadableObservation(`${table}/${exactOf(row.name)}`, `the row could not be read: ${displayText(String((error as Error)?.message ?? error), 120)}`));
    }
  }
  return { observations, nameless };
}
