// GET /api/v1/stream : Server-Sent Events, as changes happen (docs/api.md): hello first, then
// lease, event and source messages, each with its bus position as its id; resumable with
// ?after= or Last-Event-ID, filtered by ?source= and ?lease= (lib/live/stream.ts streamOptions);
// bounded: slow clients dropped, 429 past the caps (lib/live/stream.ts).
import { parseQuery } from '@/lib/api/params';
import { clientAddress } from '@/lib/api/peer';
import { streamQuery } from '@/lib/api/query-schemas';
import { processRoot } from '@/lib/root';
import { errorResponse } from '@/lib/errors';
import { admitStreamClient, openLiveStream, streamLimits, streamOptions } from '@/lib/live/stream';
import { requireAccess } from '@/lib/auth/guard';

export const dynamic = 'force-dynamic';

const HEADERS = { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache, no-transform', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' };

export async function GET(request: Request) {
  let options, admission, root;
  try {
    await requireAccess(request, 'GET /api/v1/stream');
    options = streamOptions(request.headers.get('last-event-id'), parseQuery(streamQuery, new URL(request.url).searchParams));
    root = processRoot();
    admission = admitStreamClient(root, clientAddress(request.headers), streamLimits(root.config));
    if (!admission.ok) return admission.response;
    root.ensureRelay(await root.store());
  } catch (error) {
    if (admission?.ok) admission.release();
    return errorResponse(error);
  }
  return new Response(openLiveStream({ ...options, bus: root.bus, signal: request.signal, onEnd: admission.release }), { headers: HEADERS });
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
