// GET /api/v1/stream : Server-Sent Events, as changes happen.
//   event: hello   data: { position, gap }   first, on every connection
//   event: lease   data: a lease (DESIGN.md section 5)
//   event: event   data: a lease event
//   event: source  data: a source's status change
// Every message has an id, its position on this server's bus (lib/live/bus.ts). A
// stream resumes after a position, from ?after=<position> (the lease list's `position`) or
// the Last-Event-ID an EventSource sends when it reconnects: the messages after it come first.
// `gap: true` in hello says that could not be done (a position of another process, or too
// old): the client has missed messages and should read again what it shows.
// Optional filters: ?source=<name>, ?lease=<id>.
// Bounded: a client that stops reading is dropped (and resumes when it reconnects); at most
// LEASEHOLD_STREAM_MAX_CLIENTS streams, LEASEHOLD_STREAM_MAX_CLIENTS_PER_ADDRESS per address,
// 429 past either (lib/live/stream.ts).
import type { BusMessage } from '@/lib/live/bus';
import { processCollector } from '@/lib/collector/process';
import { ensureRelay } from '@/lib/live/relay';
import { getStore } from '@/lib/db';
import { errorResponse } from '@/lib/errors';
import { clientAddress } from '@/lib/api/peer';
import { admitStreamClient, openLiveStream } from '@/lib/live/stream';

export const dynamic = 'force-dynamic';

const HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache, no-transform',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
};

export async function GET(request: Request) {
  let admission;
  try {
    admission = admitStreamClient(clientAddress(request.headers));
  } catch (error) {
    return errorResponse(error);
  }
  if (!admission.ok) return admission.response;
  let store;
  try {
    store = await getStore();
  } catch (error) {
    admission.release();
    return errorResponse(error);
  }
  ensureRelay(store, () => processCollector()?.id);
  const search = new URL(request.url).searchParams;
  // An EventSource reconnecting sends the last id it saw: newer than the ?after= it started with.
  const after = request.headers.get('last-event-id') ?? search.get('after');
  const onlySource = search.get('source');
  const onlyLease = search.get('lease');
  const wanted = (message: BusMessage) => {
    const source = message.type === 'lease' ? message.lease.source : message.type === 'event' ? message.event.leaseId.split('/')[0] : message.source.name;
    const lease = message.type === 'lease' ? message.lease.id : message.type === 'event' ? message.event.leaseId : null;
    return (!onlySource || source === onlySource) && (!onlyLease || lease === onlyLease);
  };
  const stream = openLiveStream({ after, wanted, signal: request.signal, onEnd: admission.release });
  return new Response(stream, { headers: HEADERS });
}

// HEAD: the headers alone. (Next would otherwise run GET and never read its stream.)
export function HEAD() {
  return new Response(null, { headers: HEADERS });
}
