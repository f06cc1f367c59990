// POST /api/v1/webhooks/{id}/replay : { deliveryId? } (or no body) → { replayed }: dead-lettered deliveries (all, or one)
// are queued again, due now, under their own webhook-id (admin).
import { pathId } from '@/lib/api/params';
import { readOptionalJsonBody } from '@/lib/api/body';
import { allowedMethods } from '@/lib/api/refusal';
import { apiErrorResponse, methodHandlers } from '@/lib/api/respond';
import { replayBody, replayDeliveries } from '@/lib/alerts/manage';
import { requireAccess } from '@/lib/auth/guard';
import { parseBody } from '@/lib/auth/requests';
import { getStore } from '@/lib/root';
import { reply } from '@/lib/api/reply';
import { replayedSchema } from '@/lib/domain/schemas';

export const dynamic = 'force-dynamic';

export async function POST(request: Request, { params }: { params: Promise<{ id: string }> }) {
  try {
    const json = (await readOptionalJsonBody(request, { limitBytes: 1024 })) ?? {};
    await requireAccess(request, 'POST /api/v1/webhooks/[id]/replay');
    const body = parseBody(replayBody, json, 'The body must be {} (every dead delivery) or { "deliveryId" }');
    return reply(replayedSchema, await replayDeliveries(await getStore(), await pathId(params), body.deliveryId ?? null));
  } catch (error) {
    return apiErrorResponse(error);
  }
}

const { notAllowed, options } = methodHandlers(allowedMethods('/api/v1/webhooks/x/replay')!);
export const OPTIONS = options;
export const GET = notAllowed;
export const PUT = notAllowed;
export const PATCH = notAllowed;
export const DELETE = notAllowed;
