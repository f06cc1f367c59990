import { InvalidParameterError, parseLimit, parseSearchText, parseSince, singleParam } from '@/lib/api/params';
import { getStore } from '@/lib/db';
import { FAILOVER_CAUSES, FAILOVER_CHANGES, failoversToCsv, matchesFailover, parseCause, parseChange, type FailoverFilter } from '@/lib/domain/failover-stats';
import { errorResponse } from '@/lib/errors';
import { listFailovers, type FailoverView } from '@/lib/queries/leases';

export const dynamic = 'force-dynamic';

const PAGE = 5_000;
const MAX_ROWS = 100_000;

/**
 * GET /api/v1/failovers.csv?since=&q=&cause=&change=&limit= : the failovers page as a spreadsheet,
 * every failover in the range that matches the page's filters (not only the rows loaded in
 * the browser), newest first, at most `limit` (100,000) rows.
 */
export async function GET(request: Request) {
  try {
    const search = new URL(request.url).searchParams;
    const since = parseSince(search);
    const limit = parseLimit(search, MAX_ROWS, MAX_ROWS);
    const filter = parseFilter(search);
    const store = await getStore();
    const rows: FailoverView[] = [];
    let before: bigint | undefined;
    let truncated = false;
    // Page through the store: one query per 5,000 events, until the range or the limit ends.
    for (;;) {
      if (request.signal.aborted) return new Response(null, { status: 499 });
      const page = await listFailovers(store, { since, limit: PAGE, before });
      for (const failover of page.failovers) if (matchesFailover(failover, filter)) rows.push(failover);
      if (rows.length >= limit) {
        truncated = rows.length > limit || page.next !== null;
        rows.length = limit;
        break;
      }
      if (page.next === null) break;
      before = BigInt(page.next);
    }
    const stamp = new Date().toISOString().slice(0, 19).replace(/[:T]/g, '-');
    // The BOM makes Excel read the file as UTF-8 (holders and keys may be any text).
    return new Response(`\uFEFF${failoversToCsv(rows)}`, {
      headers: {
        'Content-Type': 'text/csv; charset=utf-8',
        'Content-Disposition': `attachment; filename="leasehold-failovers-${stamp}.csv"`,
        'Cache-Control': 'no-store',
        'X-Leasehold-Rows': String(rows.length),
        'X-Leasehold-Truncated': String(truncated),
      },
    });
  } catch (error) {
    return errorResponse(error);
  }
}

function parseFilter(search: URLSearchParams): FailoverFilter {
  const rawCause = singleParam(search, 'cause', 32) ?? null;
  const cause = parseCause(rawCause);
  if (rawCause !== null && cause === null) throw new InvalidParameterError('cause', `one of ${FAILOVER_CAUSES.join(', ')}`, rawCause);
  const rawChange = singleParam(search, 'change', 32) ?? null;
  const change = parseChange(rawChange);
  if (rawChange !== null && change === null) throw new InvalidParameterError('change', `one of ${FAILOVER_CHANGES.join(', ')}`, rawChange);
  return { text: parseSearchText(search) ?? null, cause, change };
}
