// GET /api/v1/stream : Server-Sent Events, as changes happen.
//   event: lease   data: a lease (DESIGN.md section 5)
//   event: event   data: a lease event
//   event: source  data: a source's status change
// Optional filters: ?source=<name>, ?lease=<id>.
import { subscribe, type BusMessage } from '@/lib/collector/bus';
import { ensureRelay } from '@/lib/collector/relay';
import { getStore } from '@/lib/db';
import { errorResponse } from '@/lib/errors';

export const dynamic = 'force-dynamic';

const HEARTBEAT_MS = 15_000;

export async function GET(request: Request) {
  let store;
  try {
    store = await getStore();
  } catch (error) {
    return errorResponse(error);
  }
  ensureRelay(store);
  const search = new URL(request.url).searchParams;
  const onlySource = search.get('source');
  const onlyLease = search.get('lease');
  const wanted = (message: BusMessage) => {
    const source = message.type === 'lease' ? message.lease.source : message.type === 'event' ? message.event.leaseId.split('/')[0] : message.source.name;
    const lease = message.type === 'lease' ? message.lease.id : message.type === 'event' ? message.event.leaseId : null;
    return (!onlySource || source === onlySource) && (!onlyLease || lease === onlyLease);
  };

  const encoder = new TextEncoder();
  let cleanup = () => {};
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      let open = true;
      const send = (text: string) => {
        if (!open) return;
        try {
          controller.enqueue(encoder.encode(text));
        } catch {
          cleanup();
        }
      };
      send(`retry: 2000\n: connected\n\n`);
      const unsubscribe = subscribe((message) => {
        if (!wanted(message)) return;
        const data = message.type === 'lease' ? message.lease : message.type === 'event' ? message.event : message.source;
        send(`event: ${message.type}\ndata: ${JSON.stringify(data)}\n\n`);
      });
      const heartbeat = setInterval(() => send(': keepalive\n\n'), HEARTBEAT_MS);
      cleanup = () => {
        if (!open) return;
        open = false;
        clearInterval(heartbeat);
        unsubscribe();
        try {
          controller.close();
        } catch {
          // already closed by the client going away
        }
      };
      request.signal.addEventListener('abort', () => cleanup(), { once: true });
    },
    cancel() {
      cleanup();
    },
  });
  return new Response(stream, {
    headers: {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    },
  });
}
