// GET  /api/v1/tokens : { tokens } (admin)
// POST /api/v1/tokens : { name, role, expiresInDays? } → { token, ... } (admin): the token is in this answer only.
import { readJsonBody } from '@/lib/api/body';
import { allowedMethods } from '@/lib/api/refusal';
import { apiErrorResponse, methodHandlers } from '@/lib/api/respond';
import { requireAccess } from '@/lib/auth/guard';
import { addToken, newTokenBody, usersAndTokens } from '@/lib/auth/manage';
import { parseBody } from '@/lib/auth/requests';
import { getStore } from '@/lib/root';
import { reply } from '@/lib/api/reply';
import { newTokenSchema, tokensSchema } from '@/lib/domain/schemas';

export const dynamic = 'force-dynamic';

export async function GET(request: Request) {
  try {
    await requireAccess(request, 'GET /api/v1/tokens');
    return reply(tokensSchema, { tokens: (await usersAndTokens(await getStore())).tokens });
  } catch (error) {
    return apiErrorResponse(error);
  }
}

export async function POST(request: Request) {
  try {
    const json = await readJsonBody(request, { limitBytes: 4096 });
    const principal = (await requireAccess(request, 'POST /api/v1/tokens'))!;
    const body = parseBody(newTokenBody, json, 'The body must be { "name", "role" } with optional "expiresInDays"');
    return reply(newTokenSchema, await addToken(await getStore(), body, principal), { status: 201 });
  } catch (error) {
    return apiErrorResponse(error);
  }
}

const { notAllowed, options } = methodHandlers(allowedMethods('/api/v1/tokens')!);
export const OPTIONS = options;
export const PUT = notAllowed;
export const PATCH = notAllowed;
export const DELETE = notAllowed;
