// The error answer of a route: a refusal (lib/api/refusal.ts) as it is, anything else through
// lib/errors.ts (typed errors to a status and a sentence; a bug to a 500 with a reference).
import { errorResponse } from '../errors';
import { currentHostRule } from './guard';
import { checkHost } from './host';
import { methodNotAllowed, refusalResponse, RequestRefusedError } from './refusal';

export function apiErrorResponse(error: unknown): Response {
  return error instanceof RequestRefusedError ? refusalResponse(error) : errorResponse(error);
}

/**
 * Handlers for a route that proxy.ts does not see every request of (one that takes a body):
 * the methods it does not answer (405) and OPTIONS (204), both with the Allow header, after
 * the Host check, as proxy.ts would do.
 */
export function methodHandlers(allowed: string[]) {
  const answer = (request: Request, response: () => Response) => {
    try {
      checkHost(currentHostRule(), request.headers, new URL(request.url).pathname, request.method.toUpperCase());
      return response();
    } catch (error) {
      return apiErrorResponse(error);
    }
  };
  const notAllowed = (request: Request) => answer(request, () => refusalResponse(methodNotAllowed(request.method, allowed)));
  return {
    notAllowed,
    options: (request: Request) => answer(request, () => new Response(null, { status: 204, headers: { Allow: allowed.join(', '), 'Cache-Control': 'no-store' } })),
  };
}

/** A CSV export's answer (failovers.csv, audit.csv): the file as an attachment, with its row count and whether it was cut at the limit. */
export function csvResponse(file: { csv: string; filename: string; rows: number; truncated: boolean } | null): Response {
  if (!file) return new Response(null, { status: 499 }); // the client went away
  return new Response(file.csv, {
    headers: {
      'Content-Type': 'text/csv; charset=utf-8',
      'Content-Disposition': `attachment; filename="${file.filename}"`,
      'Cache-Control': 'no-store',
      'X-Leasehold-Rows': String(file.rows),
      'X-Leasehold-Truncated': String(file.truncated),
    },
  });
}
