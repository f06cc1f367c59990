// GET  /api/v1/webhooks : { webhooks } with their delivery counts (admin)
// POST /api/v1/webhooks : { name, url, format?, secret?, routingKey?, rules? } → { webhook, secret } (admin): a whsec_ secret is made
//                         when none is given, and shown in this answer only.
import { readJsonBody } from '@/lib/api/body';
import { allowedMethods } from '@/lib/api/refusal';
import { apiErrorResponse, methodHandlers } from '@/lib/api/respond';
import { addWebhook, newWebhookBody } from '@/lib/alerts/manage';
import { requireAccess } from '@/lib/auth/guard';
import { parseBody } from '@/lib/auth/requests';
import { getConfig } from '@/lib/root';
import { getStore } from '@/lib/root';
import { deliveryCounts } from '@/lib/db/deliveries';
import { listWebhooks } from '@/lib/db/webhooks';
import { reply } from '@/lib/api/reply';
import { newWebhookSchema, webhookListSchema } from '@/lib/domain/schemas';

export const dynamic = 'force-dynamic';

export async function GET(request: Request) {
  try {
    await requireAccess(request, 'GET /api/v1/webhooks');
    const store = await getStore();
    const [webhooks, counts] = await Promise.all([listWebhooks(store), deliveryCounts(store)]);
    return reply(webhookListSchema, { webhooks: webhooks.map((w) => ({ ...w, deliveries: counts.get(w.id) ?? { pending: 0, dead: 0, delivered: 0 } })) });
  } catch (error) {
    return apiErrorResponse(error);
  }
}

export async function POST(request: Request) {
  try {
    const json = await readJsonBody(request, { limitBytes: 8192 });
    await requireAccess(request, 'POST /api/v1/webhooks');
    const body = parseBody(newWebhookBody, json, 'The body must be { "name", "url" } with optional "format", "secret", "routingKey" and "rules"');
    return reply(newWebhookSchema, await addWebhook(await getStore(), getConfig().alerts, body), { status: 201 });
  } catch (error) {
    return apiErrorResponse(error);
  }
}

const { notAllowed, options } = methodHandlers(allowedMethods('/api/v1/webhooks')!);
export const OPTIONS = options;
export const PUT = notAllowed;
export const PATCH = notAllowed;
export const DELETE = notAllowed;
