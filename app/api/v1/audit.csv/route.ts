// GET /api/v1/audit.csv?since=&until=&actor=&lease=&action=&phase=&limit= : the audit log as a
// spreadsheet (operator and admin), at most `limit` (100,000) rows, newest first.
import { parseQuery } from '@/lib/api/params';
import { auditCsvQuery } from '@/lib/api/query-schemas';
import { requireAccess } from '@/lib/auth/guard';
import { getStore } from '@/lib/root';
import { csvResponse } from '@/lib/api/respond';
import { errorResponse } from '@/lib/errors';
import { auditCsv } from '@/lib/queries/audit';

export const dynamic = 'force-dynamic';

export async function GET(request: Request) {
  try {
    await requireAccess(request, 'GET /api/v1/audit.csv');
    const query = parseQuery(auditCsvQuery, new URL(request.url).searchParams);
    return csvResponse(await auditCsv(await getStore(), query, request.signal));
  } catch (error) {
    return errorResponse(error);
  }
}
