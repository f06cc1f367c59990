import { parseQuery } from '@/lib/api/params';
import { failoversCsvQuery } from '@/lib/api/query-schemas';
import { getStore } from '@/lib/root';
import { csvResponse } from '@/lib/api/respond';
import { errorResponse } from '@/lib/errors';
import { failoversCsv } from '@/lib/queries/failovers';
import { requireAccess } from '@/lib/auth/guard';

export const dynamic = 'force-dynamic';

/**
 * GET /api/v1/failovers.csv?since=&q=&cause=&change=&limit= : the failovers page as a spreadsheet,
 * every failover in the range that matches the page's filters (not only the rows loaded in
 * the browser), newest first, at most `limit` (100,000) rows.
 */
export async function GET(request: Request) {
  try {
    await requireAccess(request, 'GET /api/v1/failovers.csv');
    const query = parseQuery(failoversCsvQuery, new URL(request.url).searchParams);
    return csvResponse(await failoversCsv(await getStore(), query, request.signal));
  } catch (error) {
    return errorResponse(error);
  }
}
