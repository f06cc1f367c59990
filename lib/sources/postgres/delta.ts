// A poll that reads only what changed. A lease table of 100,000 rows renewed thousands of
// times a second costs a full read every poll (the server computes and sends every row, the
// observer parses and judges each one): most of a second of both machines' time. Instead, after
// a full read, each poll asks for the rows written since (their xmin, the transaction that
// wrote the row's current version, is not older than the snapshot before the last read), with
// the table's row count in the same statement. The picture of the table is the last one with
// those rows replaced, each unchanged lease's remaining time counted down on the server's
// clock (the now() of the same statement: a lease whose expiry passed with no write shows as
// expired, as a full read would show it). It is the picture a full read would give:
//   - every change to a row gives it a new xmin, and a transaction that commits after a
//     snapshot has an id not older than that snapshot's xmin (in progress then, or later);
//   - an insert is a change; a delete shows as a count lower than the names known, and then
//     the table is read whole, in the same poll;
//   - a server other than the last one (a failover, a restart: pg_postmaster_start_time), a
//     table that could not be read, or any doubt: a full read, in the same poll.
// Transaction ids are compared modulo 2^32 as PostgreSQL does: a row too old to compare
// (frozen) may be read again needlessly, never missed. A full read still comes every
// FULL_READ_EVERY_MS. Servers without pg_current_snapshot() (before PostgreSQL 13), and
// tables without xmin (a view): full reads every poll, as before.
import type { PgPoolClientLike } from '../../db/pg-like';
import type { Observation } from '../../domain/observe';
import { breathe, ITEMS_PER_BREATH } from '../../time/clock';
import type { PollResult, SourceStatusDetail } from '../types';
import { readAdvisory } from './advisory';
import type { PostgresSourceState } from './connection';
import { onlyThisPart, PartUnreadableError } from './part-errors';
import { changedRowsQuery, type TableRow } from './table-query';
import { judgeRows, layoutOf, tableFailure, type JudgedRows } from './tables';

/** How often a source whose polls read only what changed still reads everything (belt and braces: nothing above needs it). */
export const FULL_READ_EVERY_MS = 300_000;

/** One table as last read: its leases by key, the expiry of each on the server's clock, its nameless rows. */
type TableMirror = { leases: Map<string, Observation>; expiries: Map<string, number>; nameless: number; atMs: number };

/** Where the last read stood: the snapshot taken just before it, and the server it was taken on. */
type Watermark = { xmin: string; started: string };

export type DeltaState = {
  /** false once the server or a table showed it cannot say what changed: every poll is a full read. */
  possible: boolean;
  /** Set by a full read that read every part; null: the next poll is a full read. */
  base: (Watermark & { fullAtMono: number }) | null;
  tables: Map<string, TableMirror>;
  serverVersion: string | null;
};

export const newDeltaState = (): DeltaState => ({ possible: true, base: null, tables: new Map(), serverVersion: null });

/** The snapshot before a read, or null when this server cannot give one (then polls read everything). */
export async function readWatermark(state: PostgresSourceState, client: PgPoolClientLike): Promise<Watermark | null> {
  if (!state.delta.possible) return null;
  try {
    const { rows } = await client.query<Watermark>(
      `SELECT (pg_snapshot_xmin(pg_current_snapshot())::text::numeric % 4294967296)::text AS xmin, pg_postmaster_start_time()::text AS started`,
    );
    return rows[0] ?? null;
  } catch (error) {
    if (!onlyThisPart(error)) throw error;
    state.delta.possible = false; // no such function here (or not allowed): full reads
    return null;
  }
}

/** After a full read: its tables as read, and the watermark taken before it (null: the next poll reads everything again). */
export function rememberFullRead(state: PostgresSourceState, watermark: Watermark | null, tables: Map<string, JudgedRows>, serverVersion: string | null, startedMono: number) {
  const { delta } = state;
  delta.tables.clear();
  delta.serverVersion = serverVersion;
  const everyTable = state.config.tables.every(({ table }) => tables.has(table));
  delta.base = watermark && everyTable ? { ...watermark, fullAtMono: startedMono } : null;
  if (!delta.base) return;
  for (const [table, judged] of tables) {
    delta.tables.set(table, { leases: new Map(judged.observations.map((o) => [o.key, o])), expiries: judged.expiries, nameless: judged.nameless, atMs: 0 });
  }
}

/** The message for a table's nameless rows (also a full read's: snapshot.ts). */
export const namelessProblem = (table: string, nameless: number) => `table ${table}: ${nameless} row${nameless === 1 ? '' : 's'} with a NULL name (not shown: they cannot be told apart)`;

/**
 * A poll of what changed since the last read, as the full picture it makes; null when a full
 * read is needed instead (the caller makes it, on the same connection).
 */
export async function pollChanges(state: PostgresSourceState, client: PgPoolClientLike, nowMono: number): Promise<PollResult | null> {
  const { delta, config } = state;
  const base = delta.base;
  if (!delta.possible || !base || nowMono - base.fullAtMono >= FULL_READ_EVERY_MS) return null;
  const watermark = await readWatermark(state, client);
  if (!watermark || watermark.started !== base.started) return null;
  for (const { table, format } of config.tables) {
    const mirror = delta.tables.get(table);
    if (!mirror || !(await readChanged(state, client, table, format, base, mirror))) return null;
  }
  const observations: Observation[] = [];
  if (config.advisoryLocks) {
    try {
      observations.push(...(await readAdvisory(config.name, client)));
    } catch (error) {
      if (error instanceof PartUnreadableError) return null; // the full read reports it
      throw error;
    }
  }
  delta.base = { ...watermark, fullAtMono: base.fullAtMono };
  const problems: string[] = [];
  for (const [table, mirror] of delta.tables) {
    if (mirror.nameless > 0) problems.push(namelessProblem(table, mirror.nameless));
    let index = 0;
    for (const [key, lease] of mirror.leases) {
      if (++index % ITEMS_PER_BREATH === 0) await breathe();
      const expiry = mirror.expiries.get(key);
      observations.push(expiry === undefined ? lease : { ...lease, remainingMs: Math.round(expiry - mirror.atMs) });
    }
  }
  const status: SourceStatusDetail = { serverVersion: delta.serverVersion, ...(problems.length ? { problems } : {}) };
  return { kind: 'full', observations, status };
}

/** The table's changed rows applied to its mirror; false when the table must be read whole (a row was deleted, or it cannot say). */
async function readChanged(state: PostgresSourceState, client: PgPoolClientLike, table: string, format: 'leasehold' | 'shedlock', base: Watermark, mirror: TableMirror): Promise<boolean> {
  let rows: (TableRow & { named: number; nameless: number; at_ms: number })[];
  try {
    const layout = await layoutOf(state, client, table, format);
    rows = (await client.query<(typeof rows)[number]>(changedRowsQuery(table, format, layout), [base.xmin])).rows;
  } catch (error) {
    if (error instanceof PartUnreadableError) return false;
    // No xmin here (a view, a foreign table): this source's polls read everything from now on.
    if ((error as { code?: unknown })?.code === '42703' && /xmin/.test(String((error as Error).message))) state.delta.possible = false;
    if (onlyThisPart(error)) return false;
    throw tableFailure(state, table, format, error);
  }
  const counts = rows[0];
  if (!counts) return false;
  const judged = await judgeRows(table, format, rows[0]!.name === null ? [] : rows);
  for (const lease of judged.observations) {
    mirror.leases.set(lease.key, lease);
    const expiry = judged.expiries.get(lease.key);
    if (expiry === undefined) mirror.expiries.delete(lease.key);
    else mirror.expiries.set(lease.key, expiry);
  }
  mirror.nameless = counts.nameless;
  mirror.atMs = counts.at_ms;
  // Names are keys: as many named rows as leases known, unless one was deleted (or names repeat: then always a full read).
  return mirror.leases.size === counts.named;
}
