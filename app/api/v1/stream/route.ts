// GET /api/v1/stream : Server-Sent Events, as changes happen.
//   event: hello   data: { position, gap }   first, on every connection
//   event: lease   data: a lease (DESIGN.md section 5)
//   event: event   data: a lease event
//   event: source  data: a source's status change
// Every message has an id, its position on this server's bus (lib/collector/bus.ts). A
// stream resumes after a position, from ?after=<position> (the lease list's `position`) or
// the Last-Event-ID an EventSource sends when it reconnects: the messages after it come first.
// `gap: true` in hello says that could not be done (a position of another process, or too
// old): the client has missed messages and should read again what it shows.
// Optional filters: ?source=<name>, ?lease=<id>.
import { position, seqOf, subscribe, type BusMessage } from '@/lib/collector/bus';
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
  // An EventSource reconnecting sends the last id it saw: newer than the ?after= it started with.
  const after = request.headers.get('last-event-id') ?? search.get('after');
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
      const epoch = position().split('.')[0];
      const afterSeq = seqOf(after);
      // Hello first, then the replayed messages (when resuming), then live ones. All of this
      // runs in one synchronous block: nothing is published in between.
      let live = false;
      const replayed: string[] = [];
      const { unsubscribe, resumed } = subscribe((message, seq) => {
        if (!wanted(message)) return;
        const data = message.type === 'lease' ? message.lease : message.type === 'event' ? message.event : message.source;
        const text = `id: ${epoch}.${seq}\nevent: ${message.type}\ndata: ${JSON.stringify(data)}\n\n`;
        if (live) send(text);
        else replayed.push(text);
      }, afterSeq);
      const hello = resumed ? `${epoch}.${afterSeq}` : position();
      // gap: asked to resume and could not; what the client shows may miss changes.
      send(`retry: 2000\nid: ${hello}\nevent: hello\ndata: ${JSON.stringify({ position: hello, gap: after !== null && !resumed })}\n\n`);
      live = true;
      for (const text of replayed) send(text);
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
