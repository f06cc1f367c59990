// Readiness: 200 when the store answers and every shipped migration is applied.
import { getStore } from '@/lib/root';
import { errorResponse } from '@/lib/errors';
import { storeHealth } from '@/lib/queries/health';

export const dynamic = 'force-dynamic';

export async function GET() {
  try {
    const health = await storeHealth(await getStore());
    return Response.json(health, { status: health.status === 'ok' ? 200 : 503, headers: { 'Cache-Control': 'no-store' } });
  } catch (error) {
    return errorResponse(error);
  }
}
