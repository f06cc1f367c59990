// POST /api/v1/webhooks/{id}/test : sends a test message now, through the whole path (format, signature, address checks),
// and answers { deliveryId, outcome, status, latencyMs, error }; it is kept in the endpoint's delivery log (admin).
import { pathId } from '@/lib/api/params';
import { guardRequest } from '@/lib/api/guard';
import { allowedMethods } from '@/lib/api/refusal';
import { apiErrorResponse, methodHandlers } from '@/lib/api/respond';
import { sendTestMessage } from '@/lib/alerts/manage';
import { requireAccess } from '@/lib/auth/guard';
import { getConfig } from '@/lib/root';
import { getStore } from '@/lib/root';
import { reply } from '@/lib/api/reply';
import { webhookTestSchema } from '@/lib/domain/schemas';

export const dynamic = 'force-dynamic';

export async function POST(request: Request, { params }: { params: Promise<{ id: string }> }) {
  try {
    guardRequest(request);
    const principal = (await requireAccess(request, 'POST /api/v1/webhooks/[id]/test'))!;
    return reply(webhookTestSchema, await sendTestMessage(await getStore(), getConfig().alerts, await pathId(params), principal.name));
  } catch (error) {
    return apiErrorResponse(error);
  }
}

const { notAllowed, options } = methodHandlers(allowedMethods('/api/v1/webhooks/x/test')!);
export const OPTIONS = options;
export const GET = notAllowed;
export const PUT = notAllowed;
export const PATCH = notAllowed;
export const DELETE = notAllowed;
