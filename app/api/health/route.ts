// Readiness: 200 when the store answers and every shipped migration is applied.
import { getStore } from '@/lib/root';
import { errorResponse } from '@/lib/errors';
import { storeHealth } from '@/lib/queries/health';
import { reply } from '@/lib/api/reply';
import { healthSchema } from '@/lib/domain/schemas';

export const dynamic = 'force-dynamic';

export async function GET() {
  try {
    const health = await storeHealth(await getStore());
    return reply(healthSchema, health, { status: health.status === 'ok' ? 200 : 503 });
  } catch (error) {
    return errorResponse(error);
  }
}
