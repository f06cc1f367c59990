// GET  /api/v1/alert-rules : { rules } (every reader)
// POST /api/v1/alert-rules : { name, type, severity?, scope?, params?, enabled? } → the rule (admin)
import { readJsonBody } from '@/lib/api/body';
import { allowedMethods } from '@/lib/api/refusal';
import { apiErrorResponse, methodHandlers } from '@/lib/api/respond';
import { addRule, newRuleBody } from '@/lib/alerts/manage';
import { requireAccess } from '@/lib/auth/guard';
import { parseBody } from '@/lib/auth/requests';
import { getStore } from '@/lib/root';
import { listRuleViews } from '@/lib/db/alert-rules';
import { reply } from '@/lib/api/reply';
import { alertRulesSchema, alertRuleViewSchema } from '@/lib/domain/schemas';

export const dynamic = 'force-dynamic';

export async function GET(request: Request) {
  try {
    await requireAccess(request, 'GET /api/v1/alert-rules');
    return reply(alertRulesSchema, { rules: await listRuleViews(await getStore()) });
  } catch (error) {
    return apiErrorResponse(error);
  }
}

export async function POST(request: Request) {
  try {
    const json = await readJsonBody(request, { limitBytes: 8192 });
    await requireAccess(request, 'POST /api/v1/alert-rules');
    const body = parseBody(newRuleBody, json, 'The body must be { "name", "type" } with optional "severity", "scope", "params" and "enabled"');
    return reply(alertRuleViewSchema, await addRule(await getStore(), body), { status: 201 });
  } catch (error) {
    return apiErrorResponse(error);
  }
}

const { notAllowed, options } = methodHandlers(allowedMethods('/api/v1/alert-rules')!);
export const OPTIONS = options;
export const PUT = notAllowed;
export const PATCH = notAllowed;
export const DELETE = notAllowed;
