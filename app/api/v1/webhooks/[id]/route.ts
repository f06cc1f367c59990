// GET    /api/v1/webhooks/{id} : { webhook, deliveries } (its delivery log, newest first) (admin)
// PATCH  /api/v1/webhooks/{id} : { name?, url?, format?, rules?, enabled?, routingKey?, rotateSecret?, retirePreviousSecret? }
//                                → { webhook, secret? } (a rotated secret is in this answer only) (admin)
// DELETE /api/v1/webhooks/{id} : the endpoint and its delivery log are gone (admin)
import { pathId } from '@/lib/api/params';
import { readJsonBody } from '@/lib/api/body';
import { guardRequest } from '@/lib/api/guard';
import { allowedMethods } from '@/lib/api/refusal';
import { apiErrorResponse, methodHandlers } from '@/lib/api/respond';
import { AlertManageError, changeWebhook, removeWebhook, webhookChangeBody } from '@/lib/alerts/manage';
import { requireAccess } from '@/lib/auth/guard';
import { parseBody } from '@/lib/auth/requests';
import { getConfig } from '@/lib/root';
import { getStore } from '@/lib/root';
import { listDeliveries } from '@/lib/db/deliveries';
import { getWebhook } from '@/lib/db/webhooks';
import { reply } from '@/lib/api/reply';
import { changedWebhookSchema, webhookDetailSchema } from '@/lib/domain/schemas';

export const dynamic = 'force-dynamic';
const headers = { 'Cache-Control': 'no-store' };
type Context = { params: Promise<{ id: string }> };

export async function GET(request: Request, { params }: Context) {
  try {
    await requireAccess(request, 'GET /api/v1/webhooks/[id]');
    const store = await getStore();
    const id = await pathId(params);
    const webhook = await getWebhook(store, id);
    if (!webhook) throw new AlertManageError(404, 'not_found', 'No such endpoint.');
    return reply(webhookDetailSchema, { webhook, deliveries: await listDeliveries(store, { webhookId: id, limit: 100 }) });
  } catch (error) {
    return apiErrorResponse(error);
  }
}

export async function PATCH(request: Request, { params }: Context) {
  try {
    const json = await readJsonBody(request, { limitBytes: 8192 });
    await requireAccess(request, 'PATCH /api/v1/webhooks/[id]');
    const change = parseBody(webhookChangeBody, json, 'The body may hold "name", "url", "format", "rules", "enabled", "routingKey", "rotateSecret" and "retirePreviousSecret"');
    return reply(changedWebhookSchema, await changeWebhook(await getStore(), getConfig().alerts, await pathId(params), change));
  } catch (error) {
    return apiErrorResponse(error);
  }
}

export async function DELETE(request: Request, { params }: Context) {
  try {
    guardRequest(request);
    await requireAccess(request, 'DELETE /api/v1/webhooks/[id]');
    await removeWebhook(await getStore(), await pathId(params));
    return new Response(null, { status: 204, headers });
  } catch (error) {
    return apiErrorResponse(error);
  }
}

const { notAllowed, options } = methodHandlers(allowedMethods('/api/v1/webhooks/x')!);
export const OPTIONS = options;
export const POST = notAllowed;
export const PUT = notAllowed;
