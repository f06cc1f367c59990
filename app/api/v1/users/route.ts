// GET  /api/v1/users : { users, tokens } (admin)
// POST /api/v1/users : { name, role, password } → the new user (admin). Reads its body itself.
import { readJsonBody } from '@/lib/api/body';
import { allowedMethods } from '@/lib/api/refusal';
import { apiErrorResponse, methodHandlers } from '@/lib/api/respond';
import { requireAccess } from '@/lib/auth/guard';
import { addUser, newUserBody, usersAndTokens } from '@/lib/auth/manage';
import { parseBody } from '@/lib/auth/requests';
import { getStore } from '@/lib/root';
import { reply } from '@/lib/api/reply';
import { userViewSchema, usersAndTokensSchema } from '@/lib/domain/schemas';

export const dynamic = 'force-dynamic';

export async function GET(request: Request) {
  try {
    await requireAccess(request, 'GET /api/v1/users');
    return reply(usersAndTokensSchema, await usersAndTokens(await getStore()));
  } catch (error) {
    return apiErrorResponse(error);
  }
}

export async function POST(request: Request) {
  try {
    const json = await readJsonBody(request, { limitBytes: 8192 });
    await requireAccess(request, 'POST /api/v1/users');
    const body = parseBody(newUserBody, json, 'The body must be { "name", "role", "password" }');
    return reply(userViewSchema, await addUser(await getStore(), body), { status: 201 });
  } catch (error) {
    return apiErrorResponse(error);
  }
}

const { notAllowed, options } = methodHandlers(allowedMethods('/api/v1/users')!);
export const OPTIONS = options;
export const PUT = notAllowed;
export const PATCH = notAllowed;
export const DELETE = notAllowed;
