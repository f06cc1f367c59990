// Runs before routing.
// - /api: Next answers a path with a malformed percent-escape with a bare 500 while decoding
//   route parameters; the API answers it with its own JSON error instead.
// - /leases: a lease page reads its id from the raw path (LEASE_PATH_HEADER) and decodes it
//   exactly once itself. Next 16 hands a page's catch-all segments over undecoded, and its
//   generateMetadata decoded: a key holding "%" or "/" must mean the same thing everywhere.
import { NextResponse, type NextRequest } from 'next/server';
import { LEASE_PATH_HEADER } from './lib/domain/lease-id';

export function proxy(request: NextRequest) {
  const raw = new URL(request.url).pathname;
  if (raw.startsWith('/leases/')) {
    const headers = new Headers(request.headers);
    headers.set(LEASE_PATH_HEADER, raw);
    return NextResponse.next({ request: { headers } });
  }
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

export const config = { matcher: ['/api/:path*', '/leases/:path*'] };
