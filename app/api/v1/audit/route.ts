// GET /api/v1/audit?since=&until=&actor=&lease=&action=&phase=&limit=&cursor= : the audit log,
// newest first, paginated (operator and admin).
import { parseQuery } from '@/lib/api/params';
import { auditQuery } from '@/lib/api/query-schemas';
import { requireAccess } from '@/lib/auth/guard';
import { getStore } from '@/lib/root';
import { errorResponse } from '@/lib/errors';
import { auditPage } from '@/lib/queries/audit';

export const dynamic = 'force-dynamic';

export async function GET(request: Request) {
  try {
    await requireAccess(request, 'GET /api/v1/audit');
    const query = parseQuery(auditQuery, new URL(request.url).searchParams);
    return Response.json(await auditPage(await getStore(), query), { headers: { 'Cache-Control': 'no-store' } });
  } catch (error) {
    return errorResponse(error);
  }
}
