// GET  /api/v1/silences : { silences } in force, to come, or ended within a day (every reader)
// POST /api/v1/silences : { scope, ruleType?, startsAt?, endsAt? | durationMs?, reason } → the silence (admin; its author is the caller)
import { readJsonBody } from '@/lib/api/body';
import { allowedMethods } from '@/lib/api/refusal';
import { apiErrorResponse, methodHandlers } from '@/lib/api/respond';
import { addSilence, newSilenceBody } from '@/lib/alerts/manage';
import { requireAccess } from '@/lib/auth/guard';
import { parseBody } from '@/lib/auth/requests';
import { getStore } from '@/lib/root';
import { listSilences } from '@/lib/db/silences';
import { reply } from '@/lib/api/reply';
import { silencesSchema, silenceViewSchema } from '@/lib/domain/schemas';

export const dynamic = 'force-dynamic';

export async function GET(request: Request) {
  try {
    await requireAccess(request, 'GET /api/v1/silences');
    return reply(silencesSchema, { silences: await listSilences(await getStore()) });
  } catch (error) {
    return apiErrorResponse(error);
  }
}

export async function POST(request: Request) {
  try {
    const json = await readJsonBody(request, { limitBytes: 8192 });
    const principal = (await requireAccess(request, 'POST /api/v1/silences'))!;
    const body = parseBody(newSilenceBody, json, 'The body must be { "scope", "reason" } with "endsAt" or "durationMs", and optional "ruleType" and "startsAt"');
    return reply(silenceViewSchema, await addSilence(await getStore(), body, principal.name), { status: 201 });
  } catch (error) {
    return apiErrorResponse(error);
  }
}

const { notAllowed, options } = methodHandlers(allowedMethods('/api/v1/silences')!);
export const OPTIONS = options;
export const PUT = notAllowed;
export const PATCH = notAllowed;
export const DELETE = notAllowed;
