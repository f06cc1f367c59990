// GET /api/v1/auth/me : who this request is, { signedIn, name, role, method }; all null when nobody.
import { authenticate } from '@/lib/auth/principal';
import { principalView } from '@/lib/auth/requests';
import { getConfig } from '@/lib/root';
import { getStore } from '@/lib/root';
import { errorResponse } from '@/lib/errors';
import { reply } from '@/lib/api/reply';
import { principalSchema } from '@/lib/domain/schemas';

export const dynamic = 'force-dynamic';

export async function GET(request: Request) {
  try {
    return reply(principalSchema, principalView(await authenticate(getStore, getConfig(), request.headers)));
  } catch (error) {
    return errorResponse(error);
  }
}
