// Any /api/ address no route answers: the API's JSON error, not an HTML page.
import { reply } from '@/lib/api/reply';
import { apiErrorSchema } from '@/lib/domain/schemas';

export const dynamic = 'force-dynamic';

export function GET(request: Request) {
  const { pathname } = new URL(request.url);
  return reply(apiErrorSchema, { error: 'not_found', message: `No API route at ${JSON.stringify(pathname.slice(0, 200))}; the routes are listed in docs/api.md.` }, { status: 404 });
}
