// A batch of state changes (leases and their events, with or without the source's row) as ONE
// statement: its own transaction, one round trip to the store. Written as observer-writes.ts's
// transaction would (BEGIN, the ownership check or the source's row, the leases, the events,
// the notice, COMMIT: six round trips), it was most of the time a pushed change took to be
// visible at 100,000 leases, where the store's server shares the machine's cores with
// everything else and each round trip waits its turn for one (bench/RESULTS.md).
//
// PostgreSQL runs every data-modifying WITH exactly once, all on one snapshot; each write
// below is gated on the ownership row (`owned`), so a collector that lost the source writes
// nothing, as the transaction's StaleOwnerError would have rolled back. The events' foreign
// key to their lease is checked at the end of the statement, when a lease written by it is
// there.
import { CHANGE_CHANNEL, MAX_NOTICE_IDS, noticeWithoutEvents } from './change-notices';
import { eventInsertSql, fencedSource, leaseUpsertSql, ownershipSql, Params, sourceUpsertSql } from './lease-rows';
import { StaleOwnerError, type WriteBatch, type WrittenEvent } from './observer-batch';
import type { SqlSession } from './sql';

/** Whether a batch is one statement's work: leases, events and the source's row only (no renewals, rollups, source events or stale marking). */
export function isChangeOnly(batch: WriteBatch): boolean {
  return !batch.renewedOnly && batch.setStale === undefined && batch.sourceEvents.length === 0 && batch.renewals.length === 0 && batch.rollups.length === 0;
}

/** Writes a change-only batch (isChangeOnly) in one statement; throws StaleOwnerError, writing nothing, when another collector owns the source. */
export async function writeChanges(sql: Pick<SqlSession, 'kind' | 'query'>, batch: WriteBatch): Promise<WrittenEvent[]> {
  const p = new Params();
  const fenced = batch.source ? batch.source.name : fencedSource(batch);
  const owned = batch.source ? sourceUpsertSql(p, batch.source, batch) : fenced === null ? 'SELECT 1' : ownershipSql(p, fenced, batch.collector.token);
  const gate = 'WHERE EXISTS (SELECT 1 FROM owned)';
  // The notice other processes hear (change-notices.ts's changeNotice), with the ids of the
  // events this wrote: sent when it wrote leases or events.
  const notice = sql.kind === 'postgres' && (batch.dirty.length || batch.events.length) ? noticeWithoutEvents(batch) : null;
  const notify = notice
    ? `, notified AS (
         SELECT pg_notify('${CHANGE_CHANNEL}', (${p.add(JSON.stringify(notice))}::jsonb || jsonb_build_object('events',
                  CASE WHEN (SELECT count(*) FROM events) <= ${MAX_NOTICE_IDS} THEN COALESCE((SELECT jsonb_agg(id) FROM events), '[]'::jsonb) END))::text)
         WHERE EXISTS (SELECT 1 FROM owned) AND ${batch.dirty.length ? 'true' : 'EXISTS (SELECT 1 FROM events)'})`
    : '';
  const [row] = await sql.query<{ owned: boolean; written: WrittenEvent[] }>(
    `WITH owned AS (${owned}),
          leases AS (${batch.dirty.length ? leaseUpsertSql(p, batch.dirty, gate) : 'SELECT 1 WHERE false'}),
          events AS (${batch.events.length ? eventInsertSql(p, batch, gate) : "SELECT ''::text AS id, ''::text AS \"leaseId\", 0 AS seq WHERE false"})${notify}
     SELECT EXISTS (SELECT 1 FROM owned) AS owned,
            COALESCE((SELECT jsonb_agg(jsonb_build_object('id', id, 'leaseId', "leaseId", 'seq', seq)) FROM events), '[]'::jsonb) AS written
            ${notice ? ', (SELECT count(*) FROM notified) AS notices' : ''}`,
    p.values,
  );
  if (!row?.owned) throw new StaleOwnerError(fenced ?? 'the source');
  return row.written;
}
