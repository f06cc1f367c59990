// GET /api/v1/audit?since=&until=&actor=&lease=&action=&phase=&limit=&cursor= : the audit log,
// newest first, paginated (operator and admin).
import { parseQuery } from '@/lib/api/params';
import { auditQuery } from '@/lib/api/query-schemas';
import { requireAccess } from '@/lib/auth/guard';
import { getStore } from '@/lib/root';
import { errorResponse } from '@/lib/errors';
import { auditPage } from '@/lib/queries/audit';
import { reply } from '@/lib/api/reply';
import { auditPageSchema } from '@/lib/domain/schemas';

export const dynamic = 'force-dynamic';

export async function GET(request: Request) {
  try {
    await requireAccess(request, 'GET /api/v1/audit');
    const query = parseQuery(auditQuery, new URL(request.url).searchParams);
    return reply(auditPageSchema, await auditPage(await getStore(), query));
  } catch (error) {
    return errorResponse(error);
  }
}
