// POST /api/v1/demo/inbox : the embedded demo's webhook receiver (its endpoint "demo-inbox" points here). Public, as a
//                           receiver is: what it takes is only kept when its signature checks out, and shown as such. 404 without the demo.
// GET  /api/v1/demo/inbox : { messages } received, newest first (readers).
import { readJsonText } from '@/lib/api/body';
import { NotFoundError } from '@/lib/api/params';
import { allowedMethods } from '@/lib/api/refusal';
import { apiErrorResponse, methodHandlers } from '@/lib/api/respond';
import { requireAccess } from '@/lib/auth/guard';
import { processRoot } from '@/lib/root';
import { inboxMessages, receiveInboxMessage } from '@/lib/alerts/demo-inbox';
import { reply } from '@/lib/api/reply';
import { demoInboxSchema } from '@/lib/domain/schemas';

export const dynamic = 'force-dynamic';

export async function GET(request: Request) {
  try {
    await requireAccess(request, 'GET /api/v1/demo/inbox');
    return reply(demoInboxSchema, { messages: inboxMessages(processRoot()) });
  } catch (error) {
    return apiErrorResponse(error);
  }
}

export async function POST(request: Request) {
  try {
    // Host, type and size checked; the signature is of the exact text sent.
    const { text } = await readJsonText(request, { limitBytes: 256 * 1024 });
    await requireAccess(request, 'POST /api/v1/demo/inbox');
    if (!(await receiveInboxMessage(processRoot(), await processRoot().store(), request.headers, text))) throw new NotFoundError('This server runs no demo inbox.');
    return new Response(null, { status: 204 });
  } catch (error) {
    return apiErrorResponse(error);
  }
}

const { notAllowed, options } = methodHandlers(allowedMethods('/api/v1/demo/inbox')!);
export const OPTIONS = options;
export const PUT = notAllowed;
export const PATCH = notAllowed;
export const DELETE = notAllowed;
