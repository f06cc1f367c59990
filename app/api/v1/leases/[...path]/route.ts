import { changedResponse, forceResponse, parseForcePath } from '@/lib/admin/force-path';
import { ChangedSinceSeenError, forceBody } from '@/lib/admin/force-request';
import { auditRefusal, runForceAction } from '@/lib/admin/guarded-force';
import { readJsonBody } from '@/lib/api/body';
import { parseLeasePath } from '@/lib/api/params';
import { apiErrorResponse, methodHandlers } from '@/lib/api/respond';
import { parseBody } from '@/lib/auth/requests';
import { getStore, processRoot } from '@/lib/root';
import { errorResponse } from '@/lib/errors';
import { readLeasePath } from '@/lib/queries/lease-path';
import { requireAccess } from '@/lib/auth/guard';
import { ROUTE_RULES } from '@/lib/auth/route-rules';
import { reply } from '@/lib/api/reply';
import { leasePathSchema } from '@/lib/domain/schemas';

export const dynamic = 'force-dynamic';

type Params = { params: Promise<{ path: string[] }> };

/**
 * GET /api/v1/leases/{id}            one lease, with its candidates, recent events and firstSeenAt
 * GET /api/v1/leases/{id}/events     its events, newest first (?since=&types=&limit=&cursor=)
 * GET /api/v1/leases/{id}/renewals   raw recent renewals and per-minute rollups (?since=)
 * The id may come percent-encoded as one segment or as plain segments. A key may itself
 * end in "events" or "renewals": the whole path naming a lease wins (its query is checked all the same).
 */
export async function GET(request: Request, { params }: Params) {
  try {
    await requireAccess(request, 'GET /api/v1/leases/[...path]');
    const path = parseLeasePath((await params).path, new URL(request.url).searchParams);
    return reply(leasePathSchema, await readLeasePath(await getStore(), path));
  } catch (error) {
    return errorResponse(error);
  }
}

const FORCE_ROUTE = 'POST /api/v1/leases/[...path]';

/**
 * POST /api/v1/leases/{id}/force-expire | /force-release (each action of lib/admin/actions.ts)
 * { expectedHolder, expectedToken, reason, quarantineMs?, acknowledgeUnfenced?, dryRun? }.
 * Reads its body itself (lib/api/body.ts) and checks it (forceBody: the contract's limits,
 * lib/sources/force.ts SEEN_FIELDS). The route's rule is the one check of its permission: the
 * action does not ask it again (`granted`). The lease is read once: by the action, or on a 403
 * here by the audit of the refusal.
 */
export async function POST(request: Request, { params }: Params) {
  try {
    const { leaseId, action } = parseForcePath((await params).path);
    const body = parseBody(forceBody, await readJsonBody(request, { limitBytes: 64 * 1024 }), 'The body must be { "expectedHolder", "expectedToken", "reason" } with optional "quarantineMs", "acknowledgeUnfenced" and "dryRun"');
    const root = processRoot();
    const store = await root.store();
    const principal = (await requireAccess(request, FORCE_ROUTE, {
      onForbidden: (who, error) => auditRefusal(action, { store, leaseId, body, principal: who }, error),
    }))!;
    return forceResponse(await runForceAction(action, { root, sources: root.config.sources, store, leaseId, body, principal, granted: ROUTE_RULES[FORCE_ROUTE], publicUrl: root.config.alerts?.publicUrl, log: root.log.child({ area: 'admin' }), clock: root.clock }));
  } catch (error) {
    return error instanceof ChangedSinceSeenError ? changedResponse(error) : apiErrorResponse(error);
  }
}

// Requests with a body to a force path skip proxy.ts, and with it its 405s.
const { notAllowed, options } = methodHandlers(['GET', 'HEAD', 'OPTIONS', 'POST']);
export const OPTIONS = options;
export const PUT = notAllowed;
export const PATCH = notAllowed;
export const DELETE = notAllowed;
