// GET  /api/v1/demo : { running: true, faults, servers, recentFaults, digest } while the
//                     embedded demo runs here, { running: false } otherwise.
// POST /api/v1/demo : { "faults": true | false } turns the fleet's faults on or off; 404
//                     when this server runs no demo (it observes configured sources, or LEASEHOLD_DEMO=off).
import { errorResponse } from '@/lib/errors';
import { demoStatus, setDemoFaults } from '@/lib/queries/demo';

export const dynamic = 'force-dynamic';

export async function GET() {
  try {
    const status = await demoStatus();
    return Response.json(status ? { running: true, ...status } : { running: false }, { headers: { 'Cache-Control': 'no-store' } });
  } catch (error) {
    return errorResponse(error);
  }
}

export async function POST(request: Request) {
  try {
    const body = await readBody(request);
    if (typeof body !== 'object' || body === null || Array.isArray(body) || typeof (body as { faults?: unknown }).faults !== 'boolean' || Object.keys(body).length !== 1) {
      return Response.json(
        { error: 'invalid_body', message: 'The body must be a JSON object with one field, "faults": true or false.' },
        { status: 400, headers: { 'Cache-Control': 'no-store' } },
      );
    }
    return Response.json({ running: true, ...(await setDemoFaults((body as { faults: boolean }).faults)) }, { headers: { 'Cache-Control': 'no-store' } });
  } catch (error) {
    return errorResponse(error);
  }
}

async function readBody(request: Request): Promise<unknown> {
  const text = await request.text();
  if (text.length > 1_000) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

