// POST /api/v1/auth/login  { name, password } → 200 { signedIn, name, role, method } with the
// session cookie; 401 for a wrong name or password (the same answer either way); 429 past the
// failed-sign-in limits (lib/auth/sign-in.ts). Reads its body itself (lib/api/body.ts).
import { readJsonBody } from '@/lib/api/body';
import { clientAddress } from '@/lib/api/peer';
import { allowedMethods } from '@/lib/api/refusal';
import { apiErrorResponse, methodHandlers } from '@/lib/api/respond';
import { isHttps, sessionCookie } from '@/lib/auth/cookies';
import { parseBody, principalView, signInBody } from '@/lib/auth/requests';
import { endPreviousSession, signIn } from '@/lib/auth/sign-in';
import { processRoot } from '@/lib/root';
import { reply } from '@/lib/api/reply';
import { principalSchema } from '@/lib/domain/schemas';

export const dynamic = 'force-dynamic';

export async function POST(request: Request) {
  try {
    const body = parseBody(signInBody, await readJsonBody(request, { limitBytes: 4096 }), 'The body must be { "name": "...", "password": "..." }');
    const address = clientAddress(request.headers);
    const root = processRoot();
    const store = await root.store();
    const { user, cookieValue, maxAgeSeconds } = await signIn(store, root.config, body.name, body.password, address);
    // A new session at every sign-in; the one this browser had before ends (no session outlives a sign-in over it).
    await endPreviousSession(store, request.headers);
    const view = principalView({ name: user.name, role: user.role, method: 'password', userId: user.id, tokenId: null, sessionId: null, address });
    return reply(principalSchema, view, { headers: { 'Cache-Control': 'no-store', 'Set-Cookie': sessionCookie(cookieValue, isHttps(request), maxAgeSeconds) } });
  } catch (error) {
    return apiErrorResponse(error);
  }
}

const { notAllowed, options } = methodHandlers(allowedMethods('/api/v1/auth/login')!);
export const OPTIONS = options;
export const GET = notAllowed;
export const PUT = notAllowed;
export const PATCH = notAllowed;
export const DELETE = notAllowed;
