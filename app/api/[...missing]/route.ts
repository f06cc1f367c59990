// Any /api/ address no route answers: the API's JSON error, not an HTML page.
export const dynamic = 'force-dynamic';

export function GET(request: Request) {
  const { pathname } = new URL(request.url);
  return Response.json(
    { error: 'not_found', message: `No API route at ${JSON.stringify(pathname.slice(0, 200))}; the routes are listed in docs/api.md.` },
    { status: 404, headers: { 'Cache-Control': 'no-store' } },
  );
}
