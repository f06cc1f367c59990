// POST /api/v1/auth/logout            ends this session; { "everywhere": true } ends every session of its user.
// Always 200 with the cookie cleared: signing out twice is not an error.
import { z } from 'zod';
import { readOptionalJsonBody } from '@/lib/api/body';
import { allowedMethods } from '@/lib/api/refusal';
import { apiErrorResponse, methodHandlers } from '@/lib/api/respond';
import { clearedSessionCookies, isHttps } from '@/lib/auth/cookies';
import { authenticate } from '@/lib/auth/principal';
import { parseBody } from '@/lib/auth/requests';
import { endSession } from '@/lib/auth/session';
import { getConfig } from '@/lib/root';
import { getStore } from '@/lib/root';
import { deleteUserSessions } from '@/lib/db/sessions';
import { reply } from '@/lib/api/reply';
import { signedOutSchema } from '@/lib/domain/schemas';

export const dynamic = 'force-dynamic';

const logoutBody = z.strictObject({ everywhere: z.boolean().default(false) });

export async function POST(request: Request) {
  try {
    // No body, or an empty one (fetch's bodiless POST sends Content-Length: 0): this session only.
    const json = await readOptionalJsonBody(request, { limitBytes: 1024 });
    const body = json === undefined ? { everywhere: false } : parseBody(logoutBody, json, 'The body must be empty or { "everywhere": true }');
    const store = await getStore();
    const principal = request.headers.get('authorization') === null ? await authenticate(store, getConfig(), request.headers) : null;
    if (principal?.sessionId) {
      if (body.everywhere && principal.userId) await deleteUserSessions(store, principal.userId);
      else await endSession(store, principal.sessionId);
    }
    const headers = new Headers({ 'Cache-Control': 'no-store' });
    for (const cookie of clearedSessionCookies(isHttps(request))) headers.append('Set-Cookie', cookie);
    return reply(signedOutSchema, { signedIn: false }, { headers });
  } catch (error) {
    return apiErrorResponse(error);
  }
}

const { notAllowed, options } = methodHandlers(allowedMethods('/api/v1/auth/logout')!);
export const OPTIONS = options;
export const GET = notAllowed;
export const PUT = notAllowed;
export const PATCH = notAllowed;
export const DELETE = notAllowed;
