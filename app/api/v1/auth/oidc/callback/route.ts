// GET /api/v1/auth/oidc/callback : back from the provider; a session, then the page the person was going to.
import { oidcCallback } from '@/lib/auth/oidc-routes';
import { getStore } from '@/lib/root';

export const dynamic = 'force-dynamic';

export async function GET(request: Request) {
  return oidcCallback(request, await getStore());
}
