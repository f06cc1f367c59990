// DELETE /api/v1/tokens/{id} : revokes the token (admin); it is kept, marked revoked.
import { pathId } from '@/lib/api/params';
import { allowedMethods } from '@/lib/api/refusal';
import { apiErrorResponse, methodHandlers } from '@/lib/api/respond';
import { guardRequest } from '@/lib/api/guard';
import { requireAccess } from '@/lib/auth/guard';
import { removeToken } from '@/lib/auth/manage';
import { getStore } from '@/lib/root';

export const dynamic = 'force-dynamic';

export async function DELETE(request: Request, { params }: { params: Promise<{ id: string }> }) {
  try {
    guardRequest(request); // a DELETE with a body skips proxy.ts
    await requireAccess(request, 'DELETE /api/v1/tokens/[id]');
    await removeToken(await getStore(), await pathId(params));
    return new Response(null, { status: 204, headers: { 'Cache-Control': 'no-store' } });
  } catch (error) {
    return apiErrorResponse(error);
  }
}

const { notAllowed, options } = methodHandlers(allowedMethods('/api/v1/tokens/x')!);
export const OPTIONS = options;
export const GET = notAllowed;
export const POST = notAllowed;
export const PUT = notAllowed;
export const PATCH = notAllowed;
