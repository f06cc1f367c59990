// PATCH /api/v1/users/{id} : { role?, disabled?, password? } (admin). Disabling a user or
// setting a password ends their sessions; the last enabled admin cannot be demoted or disabled.
import { pathId } from '@/lib/api/params';
import { readJsonBody } from '@/lib/api/body';
import { allowedMethods } from '@/lib/api/refusal';
import { apiErrorResponse, methodHandlers } from '@/lib/api/respond';
import { requireAccess } from '@/lib/auth/guard';
import { changeUser, userChangeBody } from '@/lib/auth/manage';
import { parseBody } from '@/lib/auth/requests';
import { getStore } from '@/lib/root';
import { reply } from '@/lib/api/reply';
import { userViewSchema } from '@/lib/domain/schemas';

export const dynamic = 'force-dynamic';

export async function PATCH(request: Request, { params }: { params: Promise<{ id: string }> }) {
  try {
    const json = await readJsonBody(request, { limitBytes: 8192 });
    await requireAccess(request, 'PATCH /api/v1/users/[id]');
    const body = parseBody(userChangeBody, json, 'The body must be an object with "role", "disabled" or "password"');
    return reply(userViewSchema, await changeUser(await getStore(), await pathId(params), body));
  } catch (error) {
    return apiErrorResponse(error);
  }
}

const { notAllowed, options } = methodHandlers(allowedMethods('/api/v1/users/x')!);
export const OPTIONS = options;
export const GET = notAllowed;
export const POST = notAllowed;
export const PUT = notAllowed;
export const DELETE = notAllowed;
