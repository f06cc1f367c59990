// The collector's writes to the store (lib/db owns the lease tables): what one read of a
// source changed, in one transaction. lease-rows.ts holds the SQL of each table.
//
// - Every event carries its per-lease sequence number (source events: per source), and
//   inserting is ON CONFLICT DO NOTHING, so retrying a batch never duplicates an event. (The
//   event tables are partitioned by day, so their unique keys include the event's time: a
//   retry carries the same time as the first try.)
// - The source row carries the fencing token of the collector's ownership lease; a write
//   with a lower token than the last one is refused (StaleOwnerError): a collector that was
//   paused and lost the source cannot overwrite its successor's history.
// - Rows are passed as one JSON parameter and unpacked with jsonb_to_recordset: the same SQL
//   runs on PostgreSQL and on the embedded PGlite, whatever the batch size.
import type { TrackedLease } from '../domain/observe';
import { checkOwnership, insertEvents, iso, json, updateRenewedLeases, upsertLeases, upsertRenewals, upsertRollups, upsertSource } from './lease-rows';
import { StaleOwnerError, type RefusedLease, type WriteBatch, type WrittenEvent } from './observer-batch';
import type { Store } from './store';
import { changeNotice, notifyChange } from './change-notices';
import { isChangeOnly, writeChanges } from './change-write';

export { StaleOwnerError, type RefusedLease, type SourceWrite, type WriteBatch, type WrittenEvent } from './observer-batch';
export { loadSource, type LoadedSource } from './load-source';

/**
 * Whether the store refused a write for what was in it (PostgreSQL's SQLSTATE classes 22 data
 * exception, 23 integrity constraint, 54 program limit, P0 raised by a trigger or function),
 * rather than for being out of reach, busy or out of space: only such a refusal is one lease's
 * problem. Anything else (a lost connection, a deadlock, a full disk, a timeout) is the
 * store's, and the batch is retried whole.
 */
export function isRefusedForContent(error: unknown): boolean {
  for (let e = error, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^(22|23|54|P0)[0-9A-Z]{3}$/.test(code)) return true;
  }
  return false;
}

/**
 * Writes a batch. When the store refuses it for what is in it rather than for being out of
 * reach (isRefusedForContent), one lease must not hold up the others: the source's row is
 * written alone, then each lease with its events and renewals alone, and a lease the store
 * refuses is written as `unknown` with the store's reason (or, if even that is refused, left
 * as it was). Any other failure, of the whole batch or of one lease on its own, is the
 * store's: it is thrown, for the caller to retry the batch (every write in it is idempotent).
 */
export async function writeBatchSalvaging(store: Store, batch: WriteBatch): Promise<{ written: WrittenEvent[]; refused: RefusedLease[] }> {
  let first: unknown;
  try {
    return { written: await writeBatch(store, batch), refused: [] };
  } catch (error) {
    if (error instanceof StaleOwnerError || !isRefusedForContent(error)) throw error;
    first = error;
  }
  if (batch.source) {
    try {
      await writeBatch(store, { ...batch, dirty: [], events: [], renewals: [], rollups: [] });
    } catch {
      throw first;
    }
  }
  const written: WrittenEvent[] = [];
  const refused: RefusedLease[] = [];
  const of = <T>(items: T[], id: (item: T) => string, leaseId: string) => items.filter((item) => id(item) === leaseId);
  const leaseIds = new Set([...batch.dirty.map((l) => l.id), ...batch.events.map((e) => e.lease.id), ...batch.renewals.map((r) => r.lease.id), ...batch.rollups.map((r) => r.leaseId)]);
  for (const leaseId of leaseIds) {
    const alone: WriteBatch = {
      ...batch,
      source: null,
      sourceEvents: [],
      setStale: undefined,
      dirty: of(batch.dirty, (l) => l.id, leaseId),
      events: of(batch.events, (e) => e.lease.id, leaseId),
      renewals: of(batch.renewals, (r) => r.lease.id, leaseId),
      rollups: of(batch.rollups, (r) => r.leaseId, leaseId),
    };
    try {
      written.push(...(await writeBatch(store, alone)));
    } catch (error) {
      if (error instanceof StaleOwnerError || !isRefusedForContent(error)) throw error;
      const reason = String((error as Error)?.message ?? error).slice(0, 300);
      refused.push({ leaseId, reason });
      const lease = alone.dirty[0];
      if (!lease) continue;
      const unknown: TrackedLease = {
        ...lease,
        state: 'unknown',
        problem: `Leasehold could not store what it saw of this lease: ${reason}`,
        candidates: [],
        detail: null,
        ttlMs: null,
        token: null,
        lastToken: null,
      };
      await writeBatch(store, { ...alone, dirty: [unknown], events: [], renewals: [], rollups: [] }).catch(() => {});
    }
  }
  return { written, refused };
}

export async function writeBatch(store: Store, batch: WriteBatch): Promise<WrittenEvent[]> {
  // State changes alone (what a pushed change writes): one statement, one round trip (change-write.ts).
  if (isChangeOnly(batch)) return writeChanges({ kind: store.kind, query: store.statement }, batch);
  return store.transaction(async (sql) => {
    if (batch.source) await upsertSource(sql, batch.source, batch);
    else await checkOwnership(sql, batch);
    if (batch.setStale !== undefined) {
      await sql.query(`UPDATE "Lease" SET stale = $2, "updatedAt" = now() WHERE "sourceName" = $1 AND stale <> $2`, [batch.source!.name, batch.setStale]);
    }
    if (batch.dirty.length > 0) await (batch.renewedOnly ? updateRenewedLeases(sql, batch) : upsertLeases(sql, batch));
    const written = batch.events.length > 0 ? await insertEvents(sql, batch) : [];
    if (batch.sourceEvents.length > 0) {
      await sql.query(
        `INSERT INTO "SourceEvent" ("sourceName", seq, type, at, detail)
         SELECT $1, seq, type, at::timestamptz, detail FROM jsonb_to_recordset($2::jsonb) AS x(seq int, type text, at text, detail jsonb)
         ON CONFLICT ("sourceName", seq, at) DO NOTHING`,
        [batch.source!.name, json(batch.sourceEvents.map((e) => ({ seq: e.seq, type: e.type, at: iso(e.atWall), detail: e.detail })))],
      );
    }
    if (batch.renewals.length > 0) await upsertRenewals(sql, batch);
    if (batch.rollups.length > 0) await upsertRollups(sql, batch);
    // Other processes serving the API learn of the change at once (see lib/live/relay.ts),
    // a source's change of status included. (Not of every read: a NOTIFY in each poll's write
    // slowed the collector measurably; the relay reads the sources' last reads itself.)
    const notice = sql.kind === 'postgres' ? changeNotice(batch, written) : null;
    if (notice) await notifyChange(sql, notice);
    return written;
  });
}

/**
 * For batches that leave the source row alone (renewals): still refuse a stale owner. The
 * check holds a share lock on this collector's ownership lease row, so nobody can take the
 * source over until this transaction ends, without contending with the other write queue,
 * which fences on the source row. On the embedded store there is no other collector.
 */
