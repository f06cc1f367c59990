// The live stream's bounds without HTTP: a reader that stops reading is dropped (and resumes
// with nothing lost), one that reads keeps up through bursts, and the connection caps.
// The same over real sockets against `next start`: tests/e2e/stream-backpressure.spec.ts.
import { afterEach, describe, expect, it } from 'vitest';
import type { LeaseEventView } from '../domain/types';
import { createBus, type BusMessage } from './bus';
import { createParts } from '../parts';
import { renderMetrics } from '../metrics';
import { loadAppConfig } from '../root';
import { clientAddress } from '../api/peer';
import { AddressSet } from '../net/address-range';
import { admitStreamClient, openLiveStream, streamLimits, StreamClientTooSlow } from './stream';

const event = (id: number, pad = 0): BusMessage => ({
  type: 'event',
  event: { id: String(id), leaseId: 'r/a', type: 'renewed', at: new Date(0).toISOString(), holder: 'w'.repeat(1 + pad), previousHolder: null, token: '1', previousToken: null, gapMs: null, detail: null } as LeaseEventView,
});
// This file's own bus and parts, as a composition root (lib/root) would hand them.
const bus = createBus();
const parts = createParts();
const { position, publish, seqOf, listeners } = bus;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const all = () => true;

type Sse = { id: string; event: string; data: string };

/** Reads whole SSE messages off a stream. */
function sseReader(stream: ReadableStream<Uint8Array>) {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const messages: Sse[] = [];
  return {
    reader,
    async next(): Promise<Sse> {
      for (;;) {
        const at = text.indexOf('\n\n');
        if (at >= 0) {
          const block = text.slice(0, at);
          text = text.slice(at + 2);
          if (block.startsWith(':')) continue;
          const field = (name: string) => block.split('\n').find((line) => line.startsWith(`${name}: `))?.slice(name.length + 2) ?? '';
          const message = { id: field('id'), event: field('event'), data: field('data') };
          messages.push(message);
          return message;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error('the stream ended');
        text += decoder.decode(value, { stream: true });
      }
    },
  };
}

const opened: { end(): void }[] = [];
function open(options: Partial<Parameters<typeof openLiveStream>[0]> = {}) {
  let ended = 0;
  const stream = openLiveStream({ bus, after: null, wanted: all, onEnd: () => (ended += 1), ...options });
  const handle = { stream, ended: () => ended, end: () => void stream.cancel().catch(() => {}) };
  opened.push(handle);
  return handle;
}

afterEach(() => {
  for (const handle of opened.splice(0)) handle.end();
});

describe('the live stream', () => {
  it('sends hello, then live messages with their positions as ids', async () => {
    const { stream } = open();
    const sse = sseReader(stream);
    const hello = await sse.next();
    expect(hello.event).toBe('hello');
    expect(JSON.parse(hello.data)).toEqual({ position: position(), gap: false });
    publish(event(1));
    const first = await sse.next();
    expect(first.event).toBe('event');
    expect(first.id).toBe(position());
  });

  it('drops a client that does not read: errored, unsubscribed, its slot freed, counted', async () => {
    const before = listeners();
    const handle = open({ bufferBytes: 4096, stallMs: 50 });
    expect(listeners()).toBe(before + 1);
    // Nobody reads: the queue fills past its highWaterMark and stays full.
    for (let i = 0; i < 40; i++) publish(event(i, 200));
    expect(handle.ended()).toBe(0); // a full queue alone is not a drop: it may be a burst
    await sleep(80);
    publish(event(99));
    expect(handle.ended()).toBe(1);
    expect(listeners()).toBe(before);
    const reader = handle.stream.getReader();
    await expect(reader.closed).rejects.toBeInstanceOf(StreamClientTooSlow);
    expect(((await reader.closed.catch((error: Error) => error)) as Error).name).toBe('AbortError');
    expect(await renderMetrics()).toMatch(/^leasehold_stream_dropped_total [1-9]/m);
  });

  it('drops at once a client whose queue reaches the hard cap', async () => {
    const handle = open({ bufferBytes: 4096, maxBufferBytes: 16_384, stallMs: 60_000 });
    for (let i = 0; i < 200 && handle.ended() === 0; i++) publish(event(i, 200));
    expect(handle.ended()).toBe(1);
  });

  it('keeps a client that reads through a burst larger than its buffer', async () => {
    const { stream, ended } = open({ bufferBytes: 4096, maxBufferBytes: 1 << 20, stallMs: 50 });
    const sse = sseReader(stream);
    await sse.next();
    const from = seqOf(position())!;
    for (let i = 0; i < 300; i++) publish(event(i, 200)); // about 90 KB at once
    for (let i = 1; i <= 300; i++) expect(seqOf((await sse.next()).id)).toBe(from + i);
    await sleep(80);
    publish(event(1));
    expect(seqOf((await sse.next()).id)).toBe(from + 301);
    expect(ended()).toBe(0);
  });

  it('a dropped client that comes back with its last id resumes with nothing lost', async () => {
    const first = open({ bufferBytes: 4096, stallMs: 30 });
    const sse = sseReader(first.stream);
    await sse.next();
    publish(event(1));
    const last = (await sse.next()).id;
    sse.reader.releaseLock();
    // It stops reading; messages keep coming; it is dropped.
    for (let i = 0; i < 40; i++) publish(event(i, 200));
    await sleep(50);
    publish(event(2));
    expect(first.ended()).toBe(1);
    const missed = seqOf(position())! - seqOf(last)!;
    // Reconnecting with Last-Event-ID: what it missed, in order, then live ones.
    const again = sseReader(open({ after: last, bufferBytes: 4096 }).stream);
    const hello = await again.next();
    expect(JSON.parse(hello.data)).toEqual({ position: last, gap: false });
    for (let i = 1; i <= missed; i++) expect(seqOf((await again.next()).id)).toBe(seqOf(last)! + i);
    publish(event(3));
    expect((await again.next()).id).toBe(position());
  });

  it('hands a long replay over as the client reads, without dropping it', async () => {
    const at = position();
    for (let i = 0; i < 2_000; i++) publish(event(i, 200)); // about 600 KB to replay
    const { stream, ended } = open({ after: at, bufferBytes: 4096, stallMs: 10 });
    const sse = sseReader(stream);
    expect(JSON.parse((await sse.next()).data).gap).toBe(false);
    for (let i = 1; i <= 1_000; i++) await sse.next();
    publish(event(1)); // live, while the replay is still being handed over
    for (let i = 1; i <= 1_001; i++) await sse.next();
    expect(ended()).toBe(0);
  });

  it('says gap when the position is not one it can resume from', async () => {
    const sse = sseReader(open({ after: 'ffffffff.1' }).stream);
    expect(JSON.parse((await sse.next()).data).gap).toBe(true);
  });
});

describe('the stream caps', () => {
  it('answers 429 with Retry-After past the cap per address, and past the cap per server', async () => {
    const limits = { maxClients: 3, maxClientsPerAddress: 2 };
    const a1 = admitStreamClient(parts, '10.0.0.1', limits);
    const a2 = admitStreamClient(parts, '10.0.0.1', limits);
    expect(a1.ok && a2.ok).toBe(true);
    const a3 = admitStreamClient(parts, '10.0.0.1', limits);
    expect(a3.ok).toBe(false);
    if (a3.ok) return;
    expect(a3.response.status).toBe(429);
    expect(a3.response.headers.get('retry-after')).toMatch(/^\d+$/);
    const body = (await a3.response.json()) as { error: string; message: string };
    expect(body.error).toBe('too_many_streams');
    expect(body.message).toContain('LEASEHOLD_STREAM_MAX_CLIENTS_PER_ADDRESS');

    const b1 = admitStreamClient(parts, '10.0.0.2', limits);
    expect(b1.ok).toBe(true);
    const b2 = admitStreamClient(parts, '10.0.0.2', limits);
    expect(b2.ok).toBe(false);
    if (!b2.ok) expect(((await b2.response.json()) as { message: string }).message).toContain('LEASEHOLD_STREAM_MAX_CLIENTS)');

    // Slots come back when streams end (once each, however often release is called).
    if (a1.ok) {
      a1.release();
      a1.release();
    }
    const b3 = admitStreamClient(parts, '10.0.0.2', limits);
    expect(b3.ok).toBe(true);
    expect(admitStreamClient(parts, '10.0.0.3', limits).ok).toBe(false);
    for (const slot of [a2, b1, b3]) if (slot.ok) slot.release();
  });

  it('takes its caps from the config, and from the environment through it', () => {
    expect(streamLimits({ stream: { maxClients: 20, maxClientsPerAddress: 5 } })).toEqual({ maxClients: 20, maxClientsPerAddress: 5 });
    const env = { LEASEHOLD_CONFIG: undefined, DATABASE_URL: undefined, LEASEHOLD_STREAM_MAX_CLIENTS: '20', LEASEHOLD_STREAM_MAX_CLIENTS_PER_ADDRESS: ' 5 ' };
    expect(loadAppConfig({ env, cwd: '/nonexistent' }).stream).toEqual({ maxClients: 20, maxClientsPerAddress: 5 });
    expect(loadAppConfig({ env: {}, cwd: '/nonexistent' }).stream).toEqual({ maxClients: 500, maxClientsPerAddress: 50 });
  });

  it("counts by the socket's address, or by the address a trusted proxy saw (tests/unit/api-peer.test.ts has the whole rule)", () => {
    const from = (trusted: string[], peer: string, forwarded?: string) =>
      clientAddress(new Headers({ 'x-leasehold-peer': peer, ...(forwarded ? { 'x-forwarded-for': forwarded } : {}) }), new AddressSet(trusted));
    // Straight from the client: its socket, whatever it claims.
    expect(from([], '198.51.100.7')).toBe('198.51.100.7');
    expect(from(['127.0.0.1'], '198.51.100.7', '127.0.0.1')).toBe('198.51.100.7');
    expect(from(['10.0.0.0/8'], '2001:db8::5', '10.0.0.1')).toBe('2001:db8::5');
    // A proxy on loopback or a private network that is not named: its own address, for every client behind it.
    expect(from([], '127.0.0.1', '203.0.113.9')).toBe('127.0.0.1');
    expect(from([], 'fd00::1', '198.51.100.9')).toBe('fd00::1');
    // Through a named proxy: the last entry, the one it saw.
    expect(from(['127.0.0.1'], '127.0.0.1', '203.0.113.9, 198.51.100.7')).toBe('198.51.100.7');
    expect(from(['10.0.0.0/8'], '::ffff:10.1.2.3', '198.51.100.8')).toBe('198.51.100.8');
    expect(from(['fd00::/8'], 'fd00::1', '198.51.100.9')).toBe('198.51.100.9');
    expect(from([], '::ffff:127.0.0.5')).toBe('127.0.0.5');
    expect(clientAddress(new Headers())).toBe('unknown');
  });
});
