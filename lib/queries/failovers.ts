// The failovers export (GET /api/v1/failovers.csv): every failover in the range that matches the
// failovers page's filters (not only the rows loaded in the browser), newest first, at most `limit`.
import type { Store } from '../db';
import { failoversToCsv, matchesFailover, type FailoverFilter } from '../domain/failover-stats';
import { listFailovers, type FailoverView } from './leases';
import { systemClock } from '../time/clock';

export type FailoversCsvQuery = { since?: Date; limit: number; filter: FailoverFilter };
type FailoverPage = { failovers: FailoverView[]; next: string | null };

/** Events read from the store per query. */
export const FAILOVERS_CSV_PAGE = 5_000;

/**
 * The matching failovers, paging through `readPage` (one query per FAILOVERS_CSV_PAGE events)
 * until the range or the limit ends; `truncated` when the limit cut them. Null when `signal`
 * aborts (the client went away) before a page is read.
 */
export async function collectFailovers(
  readPage: (page: { since?: Date; limit: number; before?: bigint }) => Promise<FailoverPage>,
  query: FailoversCsvQuery,
  signal?: AbortSignal,
): Promise<{ rows: FailoverView[]; truncated: boolean } | null> {
  const rows: FailoverView[] = [];
  let before: bigint | undefined;
  let truncated = false;
  for (;;) {
    if (signal?.aborted) return null;
    const page = await readPage({ since: query.since, limit: FAILOVERS_CSV_PAGE, before });
    for (const failover of page.failovers) if (matchesFailover(failover, query.filter)) rows.push(failover);
    if (rows.length >= query.limit) {
      truncated = rows.length > query.limit || page.next !== null;
      rows.length = query.limit;
      break;
    }
    if (page.next === null) break;
    before = BigInt(page.next);
  }
  return { rows, truncated };
}

export type FailoversCsv = { csv: string; filename: string; rows: number; truncated: boolean };

/** The export as a file: CSV with a byte-order mark, and its name with the time it was made. Null when `signal` aborts. */
export async function failoversCsv(store: Store, query: FailoversCsvQuery, signal?: AbortSignal): Promise<FailoversCsv | null> {
  const found = await collectFailovers((page) => listFailovers(store, page), query, signal);
  return found && failoversCsvFile(found.rows, found.truncated, new Date(systemClock.wall()));
}

export function failoversCsvFile(rows: readonly FailoverView[], truncated: boolean, now: Date): FailoversCsv {
  const stamp = now.toISOString().slice(0, 19).replace(/[:T]/g, '-');
  // The BOM makes Excel read the file as UTF-8 (holders and keys may be any text).
  return { csv: `\uFEFF${failoversToCsv(rows)}`, filename: `leasehold-failovers-${stamp}.csv`, rows: rows.length, truncated };
}
