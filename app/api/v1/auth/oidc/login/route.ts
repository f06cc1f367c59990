// GET /api/v1/auth/oidc/login?next=/path : to the OIDC provider (authorization code + PKCE).
import { oidcLogin } from '@/lib/auth/oidc-routes';

export const dynamic = 'force-dynamic';

export function GET(request: Request) {
  return oidcLogin(request);
}
