// The live stream's connections (GET /api/v1/stream): who may open one, and what each may hold.
//
// Caps. At most LEASEHOLD_STREAM_MAX_CLIENTS streams are open in this process (default 500),
// at most LEASEHOLD_STREAM_MAX_CLIENTS_PER_ADDRESS from one client address (default 50); past
// either, 429 with Retry-After. The address is the socket's, or, from a proxy named in the
// config's trustedProxies, the one that proxy saw (lib/api/peer.ts).
//
// Backpressure. Next pipes the stream to the socket and stops reading it while the socket's
// buffers are full, so a client that does not read first fills the kernel's buffers (a few MB on
// loopback), then Node's (16 KB), then this stream's queue. The queue's highWaterMark is
// STREAM_BUFFER_BYTES: a message that finds it full is still queued (a burst of changes from one
// read of a source is no reason to drop anyone), but a client whose queue has stayed full for
// STREAM_STALL_MS, or holds STREAM_MAX_BUFFER_BYTES, is dropped: its stream is errored (Next
// then destroys the socket), unsubscribed from the bus, its heartbeat stopped and its slot freed.
// Every message carries its bus position as its id, so the client (an EventSource reconnects by
// itself, with Last-Event-ID) resumes with nothing lost while the bus still remembers the
// position, or is told `gap: true`.
//
// Each live message is rendered once for every stream (the same bytes are queued for all), so
// clients that lag share the bytes they hold; replayed messages are rendered only as the
// client takes them (pull), so a resume far back is not held in memory at once.
import { metrics } from '../metrics';
import type { Bus, BusMessage } from './bus';
import { type Config } from '../config';
import { part, type Parts } from '../parts';
import { systemClock } from '../time/clock';

export const STREAM_BUFFER_BYTES = 256 * 1024;
export const STREAM_MAX_BUFFER_BYTES = 4 * 1024 * 1024;
export const STREAM_STALL_MS = 5_000;
export const STREAM_HEARTBEAT_MS = 15_000;
export const STREAM_RETRY_AFTER_S = 10;

export type StreamLimits = { maxClients: number; maxClientsPerAddress: number };

/** The caps a config sets (LEASEHOLD_STREAM_MAX_CLIENTS, _PER_ADDRESS: lib/config/schema.ts validates them at start). */
export function streamLimits(config: Pick<Config, 'stream'>): StreamLimits {
  return config.stream;
}

type Clients = { open: number; byAddress: Map<string, number> };

/** The streams open in one composition root (lib/root): the server's, or a test's. */
const STREAM_CLIENTS = part<Clients>('live stream clients', () => ({ open: 0, byAddress: new Map() }));


export type Admission = { ok: true; release: () => void } | { ok: false; response: Response };

/** Takes a slot in `root` for a stream from `address`, or the 429 to answer with. release() frees it (once). */
export function admitStreamClient(root: Parts, address: string, { maxClients, maxClientsPerAddress }: StreamLimits): Admission {
  const c = root.part(STREAM_CLIENTS);
  const fromAddress = c.byAddress.get(address) ?? 0;
  if (c.open >= maxClients || fromAddress >= maxClientsPerAddress) {
    const server = c.open >= maxClients;
    metrics.inc('leasehold_stream_rejected_total', { reason: server ? 'server' : 'address' });
    const message = server
      ? `This server has ${maxClients} live streams open, its limit (LEASEHOLD_STREAM_MAX_CLIENTS); try again in ${STREAM_RETRY_AFTER_S} s.`
      : `Your address (${address}) has ${maxClientsPerAddress} live streams open, the limit per address (LEASEHOLD_STREAM_MAX_CLIENTS_PER_ADDRESS); close one, or try again in ${STREAM_RETRY_AFTER_S} s.`;
    return {
      ok: false,
      response: Response.json(
        { error: 'too_many_streams', message },
        { status: 429, headers: { 'Retry-After': String(STREAM_RETRY_AFTER_S), 'Cache-Control': 'no-store' } },
      ),
    };
  }
  c.open += 1;
  c.byAddress.set(address, fromAddress + 1);
  metrics.set('leasehold_stream_clients', {}, c.open);
  let released = false;
  return {
    ok: true,
    release() {
      if (released) return;
      released = true;
      c.open -= 1;
      const left = (c.byAddress.get(address) ?? 1) - 1;
      if (left > 0) c.byAddress.set(address, left);
      else c.byAddress.delete(address);
      metrics.set('leasehold_stream_clients', {}, c.open);
    },
  };
}

/** Open streams in `root` (for tests). */
export function openStreamCount(root: Parts): number {
  return root.part(STREAM_CLIENTS).open;
}

export type LiveStreamOptions = {
  /** The bus of the root the stream is opened in. */
  bus: Bus;
  /** Resume after this position (?after= or Last-Event-ID). */
  after: string | null;
  wanted: (message: BusMessage) => boolean;
  /** The request's: the client went away. */
  signal?: AbortSignal;
  /** Called once when the stream ends, however it ends. */
  onEnd?: () => void;
  bufferBytes?: number;
  maxBufferBytes?: number;
  stallMs?: number;
  heartbeatMs?: number;
};

const encoder = new TextEncoder();
// The last message rendered: every stream gets the same bytes for it.
let rendered: { epoch: string; seq: number; bytes: Uint8Array } | null = null;

function render(epoch: string, message: BusMessage, seq: number): Uint8Array {
  if (rendered && rendered.seq === seq && rendered.epoch === epoch) return rendered.bytes;
  const data = message.type === 'lease' ? message.lease : message.type === 'event' ? message.event : message.source;
  const bytes = encoder.encode(`id: ${epoch}.${seq}\nevent: ${message.type}\ndata: ${JSON.stringify(data)}\n\n`);
  rendered = { epoch, seq, bytes };
  return bytes;
}

const KEEPALIVE = encoder.encode(': keepalive\n\n');

/** The error a stream ends with when its client stopped reading. Named AbortError: Next does not log it. */
export class StreamClientTooSlow extends Error {
  override name = 'AbortError';
}

/** What waits to be handed over: live bytes, or a replayed message rendered only when taken (undefined once taken). */
type Pending = Uint8Array | { message: BusMessage; seq: number } | undefined;

/** One client's stream: its queue, what waits for it, and its end (bounded as described at the top of this file). */
class LiveStream {
  readonly bufferBytes: number;
  private readonly maxBufferBytes: number;
  private readonly stallMs: number;
  private readonly epoch: string;
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  private open = true;
  private unsubscribe = () => {};
  private heartbeat: ReturnType<typeof setInterval> | undefined;
  // Messages to hand over as the client takes them: the replay, rendered only then, and live
  // ones that come while a replay is still being handed over (counted: the client lags by them).
  private pending: Pending[] = [];
  private head = 0;
  private pendingLiveBytes = 0;
  // Since when the queue has been full (at or over its highWaterMark) without the client taking any of it.
  private fullSince: number | null = null;

  constructor(private readonly options: LiveStreamOptions) {
    this.bufferBytes = options.bufferBytes ?? STREAM_BUFFER_BYTES;
    this.maxBufferBytes = options.maxBufferBytes ?? STREAM_MAX_BUFFER_BYTES;
    this.stallMs = options.stallMs ?? STREAM_STALL_MS;
    this.epoch = options.bus.position().split('.')[0]!;
  }

  start(controller: ReadableStreamDefaultController<Uint8Array>) {
    const { options, epoch } = this;
    this.controller = controller;
    const { bus } = options;
    const afterSeq = bus.seqOf(options.after);
    // Hello first, then the replayed messages (when resuming), then live ones. Subscribing
    // replays synchronously: nothing is published in between.
    let live = false;
    const subscription = bus.subscribe((message, seq) => {
      if (!options.wanted(message)) return;
      if (live) this.send(render(epoch, message, seq));
      else this.pending.push({ message, seq });
    }, afterSeq);
    this.unsubscribe = subscription.unsubscribe;
    const hello = subscription.resumed ? `${epoch}.${afterSeq}` : bus.position();
    // gap: asked to resume and could not; what the client shows may miss changes.
    const gap = options.after !== null && !subscription.resumed;
    controller.enqueue(encoder.encode(`retry: 2000\nid: ${hello}\nevent: hello\ndata: ${JSON.stringify({ position: hello, gap })}\n\n`));
    live = true;
    this.heartbeat = setInterval(() => this.send(KEEPALIVE), options.heartbeatMs ?? STREAM_HEARTBEAT_MS);
    if (options.signal?.aborted) this.end(false);
    else options.signal?.addEventListener('abort', () => this.end(false), { once: true });
  }

  end(dropped: boolean) {
    if (!this.open) return;
    this.open = false;
    clearInterval(this.heartbeat);
    this.unsubscribe();
    this.pending = [];
    this.options.onEnd?.();
    if (dropped) {
      metrics.inc('leasehold_stream_dropped_total', {});
      this.controller.error(new StreamClientTooSlow('the client did not read the stream'));
      return;
    }
    try {
      this.controller.close();
    } catch {
      // already closed by the client going away
    }
  }

  // A live message or a keepalive: queued, unless the client has stopped reading.
  private send(bytes: Uint8Array) {
    if (!this.open) return;
    if (this.head < this.pending.length) {
      this.pending.push(bytes);
      this.pendingLiveBytes += bytes.byteLength;
      if (this.pendingLiveBytes > this.bufferBytes) this.end(true);
      return;
    }
    const room = this.controller.desiredSize ?? 0;
    if (room <= 0) {
      const now = systemClock.wall();
      this.fullSince ??= now;
      if (now - this.fullSince >= this.stallMs || this.bufferBytes - room + bytes.byteLength > this.maxBufferBytes) {
        this.end(true);
        return;
      }
    } else this.fullSince = null;
    this.controller.enqueue(bytes);
  }

  // The client took something: hand over what waits, as far as it fits.
  fill() {
    const { controller } = this;
    while (this.open && this.head < this.pending.length && (controller.desiredSize ?? 0) > 0) {
      const item = this.pending[this.head]!;
      this.pending[this.head++] = undefined;
      if (item instanceof Uint8Array) {
        this.pendingLiveBytes -= item.byteLength;
        controller.enqueue(item);
      } else controller.enqueue(render(this.epoch, item.message, item.seq));
    }
    if (this.head >= this.pending.length) {
      this.pending = [];
      this.head = 0;
    }
    if ((controller.desiredSize ?? 0) > 0) this.fullSince = null;
  }
}

/**
 * The stream of Server-Sent Events: hello, the messages after `after` (when resuming), then
 * live ones, bounded as described at the top of this file.
 */
export function openLiveStream(options: LiveStreamOptions): ReadableStream<Uint8Array> {
  const stream = new LiveStream(options);
  return new ReadableStream<Uint8Array>(
    {
      start(c) {
        stream.start(c);
      },
      pull() {
        stream.fill();
      },
      cancel() {
        stream.end(false);
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: stream.bufferBytes }),
  );
}

/** The query of GET /api/v1/stream (lib/api/query-schemas.ts streamQuery): each the first value given, or null. */
export type StreamQuery = { after: string | null; source: string | null; lease: string | null; types?: string | null };

/**
 * What a request asks of its stream: where to resume, and which messages it wants.
 * - Resume after the Last-Event-ID an EventSource sends when it reconnects (newer than the
 *   ?after= it started with), else after ?after= (the lease list's `position`). Either may be
 *   a position of another process or too old: the stream then says `gap: true` in its hello.
 * - ?source=: only messages about that source (a lease's, an event's lease's, a source's own);
 *   ?lease=: only messages about that lease id (no source messages then); ?types=: only these
 *   kinds of message, comma-separated (lease, event, source; other words match nothing: the
 *   overview of a very large list asks for `source` alone). Empty: no filter.
 */
export function streamOptions(lastEventId: string | null, query: StreamQuery): Pick<LiveStreamOptions, 'after' | 'wanted'> {
  const { source: onlySource, lease: onlyLease } = query;
  const types = query.types ? new Set(query.types.split(',').map((type) => type.trim())) : null;
  return {
    after: lastEventId ?? query.after,
    wanted: (message) =>
      (!types || types.has(message.type)) && (!onlySource || messageSource(message) === onlySource) && (!onlyLease || messageLease(message) === onlyLease),
  };
}

/** The source a message is about: a lease id's part before its first "/". */
export function messageSource(message: BusMessage): string | undefined {
  return message.type === 'lease' ? message.lease.source : message.type === 'event' ? message.event.leaseId.split('/')[0] : message.source.name;
}

/** The lease a message is about, or null for a source's message. */
export function messageLease(message: BusMessage): string | null {
  return message.type === 'lease' ? message.lease.id : message.type === 'event' ? message.event.leaseId : null;
}
