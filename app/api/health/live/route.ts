// Liveness: the process answers. Says nothing about the store (that is /api/health).
import { reply } from '@/lib/api/reply';
import { liveSchema } from '@/lib/domain/schemas';

export const dynamic = 'force-dynamic';

export function GET() {
  return reply(liveSchema, { status: 'ok' });
}
