// POST /api/v1/telemetry : { reports: [{ lease, holder, token, claims, renewals }] } → 202 { accepted }
// (reporter tokens only; docs/api.md). At most 1 MB and 1,000 renewals; a request that
// names a lease this Leasehold does not observe is refused whole, with nothing stored.
import { readJsonBody } from '@/lib/api/body';
import { allowedMethods } from '@/lib/api/refusal';
import { apiErrorResponse, methodHandlers } from '@/lib/api/respond';
import { reply } from '@/lib/api/reply';
import { requireAccess } from '@/lib/auth/guard';
import { parseBody } from '@/lib/auth/requests';
import { storeTelemetry } from '@/lib/db/telemetry';
import { TELEMETRY_MAX_BYTES, telemetryAcceptedSchema, telemetryBodySchema } from '@/lib/domain/schemas';
import { getStore } from '@/lib/root';
import { systemClock } from '@/lib/time/clock';

export const dynamic = 'force-dynamic';

export async function POST(request: Request) {
  try {
    const json = await readJsonBody(request, { limitBytes: TELEMETRY_MAX_BYTES });
    await requireAccess(request, 'POST /api/v1/telemetry');
    const body = parseBody(telemetryBodySchema, json, 'The body must be { "reports": [{ "lease", "holder", "token", "claims", "renewals": [{ "at", "rttMs", "lateMs", "ok" }] }] }');
    const accepted = await storeTelemetry(await getStore(), body, new Date(systemClock.wall()));
    return reply(telemetryAcceptedSchema, { accepted }, { status: 202 });
  } catch (error) {
    return apiErrorResponse(error);
  }
}

const { notAllowed, options } = methodHandlers(allowedMethods('/api/v1/telemetry')!);
export const OPTIONS = options;
export const GET = notAllowed;
export const PUT = notAllowed;
export const PATCH = notAllowed;
export const DELETE = notAllowed;
