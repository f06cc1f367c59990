// GET /api/v1/alerts?state=&source=&lease=&rule=&limit=&cursor= : alerts firing and past, newest first.
import { parseQuery } from '@/lib/api/params';
import { alertsQuery } from '@/lib/api/query-schemas';
import { requireAccess } from '@/lib/auth/guard';
import { getStore } from '@/lib/root';
import { listAlerts } from '@/lib/db/alerts';
import { errorResponse } from '@/lib/errors';

import { reply } from '@/lib/api/reply';
import { alertsPageSchema } from '@/lib/domain/schemas';

export const dynamic = 'force-dynamic';

export async function GET(request: Request) {
  try {
    await requireAccess(request, 'GET /api/v1/alerts');
    const q = parseQuery(alertsQuery, new URL(request.url).searchParams);
    const alerts = await listAlerts(await getStore(), { state: q.state, source: q.source, leaseId: q.lease, ruleType: q.rule, before: q.cursor?.toString(), limit: q.limit });
    return reply(alertsPageSchema, { alerts, nextCursor: alerts.length === (q.limit ?? 100) ? alerts.at(-1)!.id : null });
  } catch (error) {
    return errorResponse(error);
  }
}
