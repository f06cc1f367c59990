// GET /api/v1/stream : Server-Sent Events, as changes happen (docs/api.md): hello first, then
// lease, event and source messages, each with its bus position as its id; resumable with
// ?after= or Last-Event-ID, filtered by ?source= and ?lease= (lib/live/stream.ts streamOptions);
// bounded: slow clients dropped, 429 past the caps (lib/live/stream.ts).
import { parseQuery } from '@/lib/api/params';
import { clientAddress } from '@/lib/api/peer';
import { streamQuery } from '@/lib/api/query-schemas';
import { processCollector } from '@/lib/collector/process';
import { getStore } from '@/lib/root';
import { errorResponse } from '@/lib/errors';
import { ensureRelay } from '@/lib/live/relay';
import { admitStreamClient, openLiveStream, streamOptions } from '@/lib/live/stream';
import { requireAccess } from '@/lib/auth/guard';

export const dynamic = 'force-dynamic';

const HEADERS = { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache, no-transform', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' };

export async function GET(request: Request) {
  let options, admission, store;
  try {
    await requireAccess(request, 'GET /api/v1/stream');
    options = streamOptions(request.headers.get('last-event-id'), parseQuery(streamQuery, new URL(request.url).searchParams));
    admission = admitStreamClient(clientAddress(request.headers));
    if (!admission.ok) return admission.response;
    store = await getStore();
  } catch (error) {
    if (admission?.ok) admission.release();
    return errorResponse(error);
  }
  ensureRelay(store, () => processCollector()?.id);
  return new Response(openLiveStream({ ...options, signal: request.signal, onEnd: admission.release }), { headers: HEADERS });
}

// HEAD: the headers alone. (Next would otherwise run GET and never read its stream.)
export async function HEAD(request: Request) {
  try {
    await requireAccess(request, 'GET /api/v1/stream');
  } catch (error) {
    return errorResponse(error);
  }
  return new Response(null, { headers: HEADERS });
}
