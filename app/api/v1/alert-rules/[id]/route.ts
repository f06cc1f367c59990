// PATCH  /api/v1/alert-rules/{id} : { name?, severity?, scope?, params?, enabled? } → the rule (admin); disabling resolves what it had open
// DELETE /api/v1/alert-rules/{id} : the rule is gone, its open alerts resolved; their history stays (admin)
import { pathId } from '@/lib/api/params';
import { readJsonBody } from '@/lib/api/body';
import { guardRequest } from '@/lib/api/guard';
import { allowedMethods } from '@/lib/api/refusal';
import { apiErrorResponse, methodHandlers } from '@/lib/api/respond';
import { changeRule, removeRule, ruleChangeBody } from '@/lib/alerts/manage';
import { requireAccess } from '@/lib/auth/guard';
import { parseBody } from '@/lib/auth/requests';
import { getConfig } from '@/lib/root';
import { getStore } from '@/lib/root';
import { reply } from '@/lib/api/reply';
import { alertRuleViewSchema } from '@/lib/domain/schemas';

export const dynamic = 'force-dynamic';
type Context = { params: Promise<{ id: string }> };

export async function PATCH(request: Request, { params }: Context) {
  try {
    const json = await readJsonBody(request, { limitBytes: 8192 });
    await requireAccess(request, 'PATCH /api/v1/alert-rules/[id]');
    const change = parseBody(ruleChangeBody, json, 'The body may hold "name", "severity", "scope", "params" and "enabled"');
    return reply(alertRuleViewSchema, await changeRule(await getStore(), getConfig().alerts, await pathId(params), change));
  } catch (error) {
    return apiErrorResponse(error);
  }
}

export async function DELETE(request: Request, { params }: Context) {
  try {
    guardRequest(request); // a DELETE with a body skips proxy.ts
    await requireAccess(request, 'DELETE /api/v1/alert-rules/[id]');
    await removeRule(await getStore(), getConfig().alerts, await pathId(params));
    return new Response(null, { status: 204, headers: { 'Cache-Control': 'no-store' } });
  } catch (error) {
    return apiErrorResponse(error);
  }
}

const { notAllowed, options } = methodHandlers(allowedMethods('/api/v1/alert-rules/x')!);
export const OPTIONS = options;
export const GET = notAllowed;
export const POST = notAllowed;
export const PUT = notAllowed;
