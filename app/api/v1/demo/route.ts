// GET  /api/v1/demo : { running: true, faults, servers, recentFaults, digest } while the
//                     embedded demo runs here, { running: false } otherwise.
// POST /api/v1/demo : { "faults": true | false } turns the fleet's faults on or off; 404
//                     when this server runs no demo (it observes configured sources, or LEASEHOLD_DEMO=off).
// A POST with a body does not pass through proxy.ts (which would read the body whole first):
// readJsonBody checks its Host, Origin, Content-Type and size itself (lib/api/body.ts).
import { z } from 'zod';
import { readJsonBody, invalidBody } from '@/lib/api/body';
import { guardRequest } from '@/lib/api/guard';
import { apiErrorResponse, methodHandlers } from '@/lib/api/respond';
import { allowedMethods } from '@/lib/api/refusal';
import { demoStatus, setDemoFaults } from '@/lib/queries/demo';
import { processRoot } from '@/lib/root';
import { requireAccess } from '@/lib/auth/guard';
import { reply } from '@/lib/api/reply';
import { demoSchema } from '@/lib/domain/schemas';

export const dynamic = 'force-dynamic';

const BODY_LIMIT_BYTES = 1_024;
const demoBody = z.strictObject({ faults: z.boolean() });

export async function GET(request: Request) {
  try {
    guardRequest(request); // a GET that carries a body skips proxy.ts too
    await requireAccess(request, 'GET /api/v1/demo');
    const status = await demoStatus(processRoot());
    return reply(demoSchema, status ? { running: true, ...status } : { running: false });
  } catch (error) {
    return apiErrorResponse(error);
  }
}

export async function POST(request: Request) {
  try {
    const json = await readJsonBody(request, { limitBytes: BODY_LIMIT_BYTES });
    await requireAccess(request, 'POST /api/v1/demo');
    const body = demoBody.safeParse(json);
    if (!body.success) throw invalidBody('The body must be a JSON object with one field, "faults": true or false.');
    return reply(demoSchema, { running: true, ...(await setDemoFaults(processRoot(), body.data.faults)) });
  } catch (error) {
    return apiErrorResponse(error);
  }
}

// Requests with a body to this path skip proxy.ts, and with it its Host check and its 405s.
const { notAllowed, options } = methodHandlers(allowedMethods('/api/v1/demo')!);
export const OPTIONS = options;
export const PUT = notAllowed;
export const PATCH = notAllowed;
export const DELETE = notAllowed;
