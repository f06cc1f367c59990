// Runs before routing. Next answers a path with a malformed percent-escape with a bare 500
// while decoding route parameters; the API answers it with its own JSON error instead.
import { NextResponse, type NextRequest } from 'next/server';

export function proxy(request: NextRequest) {
  const raw = new URL(request.url).pathname;
  try {
    decodeURIComponent(raw);
  } catch {
    return NextResponse.json(
      { error: 'invalid_path', message: 'The request path holds a malformed percent-escape (such as "%E0%A4%A"): encode lease ids with encodeURIComponent.' },
      { status: 400, headers: { 'Cache-Control': 'no-store' } },
    );
  }
  return NextResponse.next();
}

export const config = { matcher: ['/api/:path*'] };
