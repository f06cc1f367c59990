// A poll that reads only what changed. A lease table of 100,000 rows renewed thousands of
// times a second costs a full read every poll (the server computes and sends every row, the
// observer parses, judges and compares each one): most of a second of both machines' time.
// Instead, after a full read, each poll asks each table for the rows written since (their
// xmin, the transaction that wrote the row's current version, is not older than the snapshot
// taken before the last read) and the rows whose expiry passed since then, with the table's
// row count in the same statement. The poll speaks for those rows (covered), and says that
// every other lease of the table was read unchanged (`unchangedUnder`): the collector counts
// them as observed, with nothing to compare. It is what a full read would have shown:
//   - every change to a row gives it a new xmin, and a transaction that commits after a
//     snapshot has an id not older than that snapshot's xmin (it was in progress then, or began later);
//   - the passing of time changes only a lease's remaining time, and a lease whose expiry
//     passed since the last read is among the rows read;
//   - an insert is a change; a delete shows as a count lower than the names known, and then
//     the table is read whole, in the same poll;
//   - another server than the last one (a failover, a restart: pg_postmaster_start_time), a
//     table that could not be read, or any doubt: a full read, in the same poll.
// Transaction ids are compared modulo 2^32 as PostgreSQL compares them: a row too old to
// compare (frozen) may be read again needlessly, never missed. A full read still comes every
// FULL_READ_EVERY_MS. Servers without pg_current_snapshot() (before PostgreSQL 13), and
// tables without xmin (a view): a full read every poll, as before.
import type { PgPoolClientLike } from '../../db/pg-like';
import type { Observation } from '../../domain/observe';
import type { PollResult } from '../types';
import { readAdvisory } from './advisory';
import type { Clock } from '../../time/clock';
import type { PostgresSourceState } from './connection';
import { onlyThisPart, PartUnreadableError } from './part-errors';
import { changedRowsQuery, type TableRow } from './table-query';
import { judgeRows, layoutOf, tableFailure, type JudgedRows } from './tables';

/** How often a source whose polls read only what changed still reads everything (belt and braces: nothing above needs it). */
export const FULL_READ_EVERY_MS = 300_000;

/** One table as last read: the keys of its leases, and how many rows had no name. */
type TableNames = { keys: Set<string>; nameless: number };

/** Where the last read stood: the snapshot and the time taken just before it, and the server they were taken on. */
type Watermark = { xmin: string; at: string; started: string };

export type DeltaState = {
  /** false once the server or a table showed it cannot say what changed: every poll is a full read. */
  possible: boolean;
  /** Set by a full read that read every part; null: the next poll is a full read. */
  base: (Watermark & { fullAtMono: number }) | null;
  tables: Map<string, TableNames>;
  /** The advisory locks seen by the last read: one no longer held is covered, so it ends. */
  advisory: Set<string>;
  serverVersion: string | null;
};

/** A source's state as its reads see it: what the last full read saw, for the polls after it, and the clock they are timed on. */
export type PostgresReadState = PostgresSourceState & { delta: DeltaState; clock: Clock };

export const newDeltaState = (): DeltaState => ({ possible: true, base: null, tables: new Map(), advisory: new Set(), serverVersion: null });

/** The snapshot before a read, or null when this server cannot give one (then polls read everything). */
export async function readWatermark(state: PostgresReadState, client: PgPoolClientLike): Promise<Watermark | null> {
  if (!state.delta.possible) return null;
  try {
    const { rows } = await client.query<Watermark>(
      `SELECT (pg_snapshot_xmin(pg_current_snapshot())::text::numeric % 4294967296)::text AS xmin, now()::text AS at, pg_postmaster_start_time()::text AS started`,
    );
    return rows[0] ?? null;
  } catch (error) {
    if (!onlyThisPart(error)) throw error;
    // No such function here (before PostgreSQL 13), or not allowed: full reads from now on.
    // Anything else (a statement cancelled, say): a full read this time.
    const code = (error as { code?: unknown })?.code;
    if (code === '42883' || code === '42501') state.delta.possible = false;
    return null;
  }
}

/** After a full read: the keys of each table as read, and the watermark taken before it (null: the next poll reads everything again). */
export function rememberFullRead(
  state: PostgresReadState,
  watermark: Watermark | null,
  { tables, advisory }: { tables: Map<string, JudgedRows>; advisory: Observation[] },
  serverVersion: string | null,
  startedMono: number,
) {
  const { delta, config } = state;
  delta.tables.clear();
  delta.advisory = new Set(advisory.map((o) => o.key));
  delta.serverVersion = serverVersion;
  const everyTable = config.tables.every(({ table }) => tables.has(table));
  delta.base = watermark && everyTable ? { ...watermark, fullAtMono: startedMono } : null;
  if (!delta.base) return;
  for (const [table, { observations, nameless }] of tables) delta.tables.set(table, { keys: new Set(observations.map((o) => o.key)), nameless });
}

/** The message for a table's nameless rows (also a full read's: snapshot.ts). */
export const namelessProblem = (table: string, nameless: number) => `table ${table}: ${nameless} row${nameless === 1 ? '' : 's'} with a NULL name (not shown: they cannot be told apart)`;

/** A poll of what changed since the last read; null when a full read is needed instead (the caller makes it, on the same connection). */
export async function pollChanges(state: PostgresReadState, client: PgPoolClientLike, nowMono: number): Promise<PollResult | null> {
  const { delta, config } = state;
  const base = delta.base;
  if (!delta.possible || !base || nowMono - base.fullAtMono >= FULL_READ_EVERY_MS) return null;
  const watermark = await readWatermark(state, client);
  if (!watermark || watermark.started !== base.started) return null;
  const observations: Observation[] = [];
  const problems: string[] = [];
  for (const { table, format } of config.tables) {
    const names = delta.tables.get(table);
    const changed = names ? await readChanged(state, client, table, format, base, names) : null;
    if (!changed) return null;
    observations.push(...changed);
    if (names!.nameless > 0) problems.push(namelessProblem(table, names!.nameless));
  }
  const covered = observations.map((o) => o.key);
  if (config.advisoryLocks) {
    try {
      const locks = await readAdvisory(config.name, client);
      covered.push(...new Set([...delta.advisory, ...locks.map((o) => o.key)]));
      observations.push(...locks);
      delta.advisory = new Set(locks.map((o) => o.key));
    } catch (error) {
      if (error instanceof PartUnreadableError) return null; // the full read reports it
      throw error;
    }
  }
  delta.base = { ...watermark, fullAtMono: base.fullAtMono };
  return {
    kind: 'partial',
    covered,
    observations,
    unchangedUnder: config.tables.map(({ table }) => `${table}/`),
    status: { serverVersion: delta.serverVersion, ...(problems.length ? { problems } : {}) },
  };
}

/** The table's rows changed since the watermark, judged; null when the table must be read whole (a row was deleted, or it cannot say). */
async function readChanged(state: PostgresReadState, client: PgPoolClientLike, table: string, format: 'leasehold' | 'shedlock', base: Watermark, names: TableNames): Promise<Observation[] | null> {
  let rows: (TableRow & { named: number; nameless: number })[];
  try {
    const layout = await layoutOf(state, client, table, format);
    rows = (await client.query<(typeof rows)[number]>(changedRowsQuery(table, format, layout), [base.xmin, base.at])).rows;
  } catch (error) {
    if (error instanceof PartUnreadableError) return null;
    // No xmin here (a view, a foreign table): this source's polls read everything from now on.
    if ((error as { code?: unknown })?.code === '42703' && /xmin/.test(String((error as Error).message))) state.delta.possible = false;
    if (onlyThisPart(error)) return null;
    throw tableFailure(state, table, format, error);
  }
  const counts = rows[0];
  if (!counts) return null;
  const { observations } = await judgeRows(table, format, counts.name === null ? [] : rows);
  for (const lease of observations) names.keys.add(lease.key);
  names.nameless = counts.nameless;
  // Names are keys: as many named rows as keys known, unless one was deleted (or names repeat: then always a full read).
  return names.keys.size === counts.named ? observations : null;
}
