// DELETE /api/v1/silences/{id} : ends the silence now (it stays listed as ended); what it held back and still fires is delivered (admin)
import { pathId } from '@/lib/api/params';
import { guardRequest } from '@/lib/api/guard';
import { allowedMethods } from '@/lib/api/refusal';
import { apiErrorResponse, methodHandlers } from '@/lib/api/respond';
import { stopSilence } from '@/lib/alerts/manage';
import { requireAccess } from '@/lib/auth/guard';
import { getStore } from '@/lib/root';
import { reply } from '@/lib/api/reply';
import { silenceViewSchema } from '@/lib/domain/schemas';

export const dynamic = 'force-dynamic';

export async function DELETE(request: Request, { params }: { params: Promise<{ id: string }> }) {
  try {
    guardRequest(request);
    await requireAccess(request, 'DELETE /api/v1/silences/[id]');
    return reply(silenceViewSchema, await stopSilence(await getStore(), await pathId(params)));
  } catch (error) {
    return apiErrorResponse(error);
  }
}

const { notAllowed, options } = methodHandlers(allowedMethods('/api/v1/silences/x')!);
export const OPTIONS = options;
export const GET = notAllowed;
export const POST = notAllowed;
export const PUT = notAllowed;
export const PATCH = notAllowed;
