// The live stream's backpressure and caps, over real sockets against `next start` (issue 13,
// point 5). The server is this spec's own (port 3106): it observes a Redis prefix of its own,
// on which this spec renews locks 500 times a second, so the stream carries about that many
// `lease` messages a second (the store is a database of its own on the test PostgreSQL); its
// caps are set low (40 streams, 8 per address). Clients that do not read are raw sockets,
// paused after sending their request; they come from different loopback addresses
// (127.0.0.x) for the cap per address.
import { expect, test } from '@playwright/test';
import { ROOT } from '../support/services';
import {
  dechunk,
  metricValue,
  parseSse,
  rawRequest,
  readStream,
  rssBytes,
  stalledClient,
  startRenewals,
  startStreamServer,
  type StreamServer,
} from '../support/stream-load';

const PORT = 3106;
const RATE = 500;
const MAX_CLIENTS = 40;
const PER_ADDRESS = 8;
const MB = 1024 * 1024;

let server: StreamServer;
let load: Awaited<ReturnType<typeof startRenewals>>;

test.describe.configure({ mode: 'serial' });

test.beforeAll(async () => {
  test.setTimeout(180_000);
  const prefix = `e2e-stream-${Math.random().toString(36).slice(2, 8)}:`;
  server = await startStreamServer({
    root: ROOT,
    port: PORT,
    prefix,
    env: {
      LEASEHOLD_STREAM_MAX_CLIENTS: String(MAX_CLIENTS),
      LEASEHOLD_STREAM_MAX_CLIENTS_PER_ADDRESS: String(PER_ADDRESS),
      // A smaller heap than V8 would choose on this machine: garbage is collected within a few
      // seconds instead of piling up for a minute (up to 150 MB under this load), so that the
      // server's RSS shows what it holds rather than what it has not collected yet.
      NODE_OPTIONS: '--max-old-space-size=256',
    },
  });
  load = await startRenewals({ prefix, keys: 500, perSecond: RATE });
});

test.afterAll(async () => {
  await load?.stop();
  await server?.stop();
});

const seq = (id: string | null) => Number(id?.split('.')[1]);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('a client that does not read is dropped while one that reads is not, the server stays within bounds, and the dropped client resumes with nothing lost', async () => {
  test.setTimeout(240_000);
  const stream = `${server.url}/api/v1/stream`;
  // The load: the stream carries hundreds of messages a second.
  await expect.poll(async () => (await readStream(stream, 3_000)).messages.length, { timeout: 30_000 }).toBeGreaterThan(600);

  // Warm: the routes this test reads have been loaded (the first /metrics costs tens of MB).
  await metricValue(server.url, 'leasehold_stream_clients{}');
  await sleep(2_000);
  const samples = [] as number[];
  for (let i = 0; i < 3; i++, await sleep(1_000)) samples.push(rssBytes(server.pid));
  const baseline = samples.sort((a, b) => a - b)[1]!;

  // A client that reads, for the whole test; 24 that never read, from three addresses.
  // Long enough for the stalled clients to be dropped (about 21 s on this machine) with room to spare.
  const WINDOW_MS = 50_000;
  const reader = readStream(stream, WINDOW_MS);
  const stalled = [];
  for (let i = 0; i < 24; i++) stalled.push(await stalledClient(server.port, '/api/v1/stream', `127.0.0.${11 + (i % 3)}`));

  // The kernel's buffers fill (a few MB per socket on loopback), then Node's, then the
  // stream's; each stalled client is dropped 5 s after its queue is full. Meanwhile the
  // server's memory stays within 100 MB of what it was: 24 clients that never read, under
  // ~250 KB/s of messages each, would otherwise hold 6 MB/s more once the kernel's buffers
  // are full.
  let peak = 0;
  let dropped: number | null = null;
  const started = Date.now();
  while (Date.now() - started < WINDOW_MS - 5_000) {
    await sleep(1_000);
    peak = Math.max(peak, rssBytes(server.pid));
    expect(peak - baseline, `the server's RSS ${((Date.now() - started) / 1000).toFixed(0)} s after the clients connected, over ${(baseline / MB).toFixed(0)} MB before`).toBeLessThan(100 * MB);
    dropped = await metricValue(server.url, 'leasehold_stream_dropped_total{}');
    if (dropped === 24) break;
  }
  const droppedAfter = Date.now() - started;
  expect(dropped, 'every client that does not read is dropped (leasehold_stream_dropped_total), and only those').toBe(24);
  expect(await metricValue(server.url, 'leasehold_stream_clients{}'), 'the client that reads is still there').toBe(1);

  // A dropped client, reading at last: what the kernel held, then the end of the stream.
  const { ended, bytes } = await stalled[0]!.readToEnd(15_000);
  expect(ended, 'the server closed the connection').toBe(true);
  const { status, body } = dechunk(bytes);
  expect(status).toBe(200);
  const messages = parseSse(body);
  expect(messages[0]!.event).toBe('hello');
  const last = messages.at(-1)!.id!;
  expect(seq(last)).toBeGreaterThan(seq(messages[0]!.id));
  for (const socket of stalled) socket.socket.destroy();

  // Reconnecting at once, as an EventSource does, with Last-Event-ID: hello says no gap, and
  // the messages go on right after the last one it had.
  const again = await readStream(stream, 2_000, { 'Last-Event-ID': last });
  expect(again.status).toBe(200);
  expect(again.messages[0]!.event).toBe('hello');
  expect(JSON.parse(again.messages[0]!.data)).toEqual({ position: last, gap: false });
  expect(again.messages.length).toBeGreaterThan(2);
  again.messages.slice(1).forEach((message, i) => expect(seq(message.id)).toBe(seq(last) + 1 + i));

  // The client that reads, to the end of its window, is not dropped.
  while (Date.now() - started < WINDOW_MS - 2_000) {
    peak = Math.max(peak, rssBytes(server.pid));
    await sleep(1_000);
  }
  const read = await reader;
  const growth = (peak - baseline) / MB;
  const summary = `24 clients that do not read dropped ${(droppedAfter / 1000).toFixed(0)} s after they connected; server RSS ${(baseline / MB).toFixed(0)} MB before, peak ${(peak / MB).toFixed(0)} MB (+${growth.toFixed(0)} MB); the client that reads got ${read.messages.length} messages in ${WINDOW_MS / 1000} s`;
  console.log(`stream-backpressure: ${summary}`);
  test.info().annotations.push({ type: 'memory', description: summary });
  expect(growth).toBeLessThan(100);
  expect(await metricValue(server.url, 'leasehold_stream_dropped_total{}')).toBe(24);
  await expect.poll(() => metricValue(server.url, 'leasehold_stream_clients{}')).toBe(0);
  expect(read.messages.length).toBeGreaterThan((RATE * WINDOW_MS) / 1000 / 3);

  // Once more than the 10,000 messages the bus remembers have passed, the same position is too old: gap.
  const helloAfter = async () => JSON.parse((await readStream(stream, 500, { 'Last-Event-ID': last })).messages[0]!.data) as { position: string; gap: boolean };
  await expect.poll(async () => seq((await helloAfter()).position) - seq(last), { timeout: 60_000, intervals: [2_000] }).toBeGreaterThan(10_000);
  expect((await helloAfter()).gap).toBe(true);
});

test('the caps: 429 with Retry-After past the streams of one address, and past the streams of the server', async () => {
  test.setTimeout(120_000);
  const open = [];
  // Each claims another address under the header the server stamps with the socket's: the
  // server overwrites it, so they all count as 127.0.0.21.
  for (let i = 0; i < PER_ADDRESS; i++) open.push(await stalledClient(server.port, '/api/v1/stream', '127.0.0.21', { 'X-Leasehold-Peer': `198.51.100.${i + 1}` }));
  await sleep(1_000);

  const refused = await rawRequest(server.port, '/api/v1/stream', '127.0.0.21');
  expect(refused.status).toBe(429);
  expect(refused.headers['retry-after']).toMatch(/^\d+$/);
  expect(refused.headers['content-type']).toContain('application/json');
  const body = JSON.parse(refused.body) as { error: string; message: string };
  expect(body.error).toBe('too_many_streams');
  expect(body.message).toContain('LEASEHOLD_STREAM_MAX_CLIENTS_PER_ADDRESS');
  expect(body.message).toContain('(127.0.0.21)');
  // Another address still gets in.
  expect((await rawRequest(server.port, '/api/v1/stream', '127.0.0.22')).status).toBe(200);

  // Up to the server's cap from other addresses, then 429 for anyone.
  await expect.poll(() => metricValue(server.url, 'leasehold_stream_clients{}')).toBe(PER_ADDRESS);
  for (let i = PER_ADDRESS; i < MAX_CLIENTS; i++) open.push(await stalledClient(server.port, '/api/v1/stream', `127.0.0.${30 + Math.floor(i / PER_ADDRESS)}`));
  await expect.poll(() => metricValue(server.url, 'leasehold_stream_clients{}')).toBe(MAX_CLIENTS);
  const full = await rawRequest(server.port, '/api/v1/stream', '127.0.0.99');
  expect(full.status).toBe(429);
  expect(full.headers['retry-after']).toMatch(/^\d+$/);
  expect((JSON.parse(full.body) as { message: string }).message).toContain('LEASEHOLD_STREAM_MAX_CLIENTS)');
  expect(await metricValue(server.url, 'leasehold_stream_rejected_total{reason="address"}')).toBeGreaterThanOrEqual(1);
  expect(await metricValue(server.url, 'leasehold_stream_rejected_total{reason="server"}')).toBeGreaterThanOrEqual(1);

  // A client that goes away frees its slot.
  for (const client of open.splice(0, 5)) client.socket.destroy();
  await expect.poll(() => metricValue(server.url, 'leasehold_stream_clients{}')).toBe(MAX_CLIENTS - 5);
  expect((await rawRequest(server.port, '/api/v1/stream', '127.0.0.99')).status).toBe(200);
  for (const client of open) client.socket.destroy();
  await expect.poll(() => metricValue(server.url, 'leasehold_stream_clients{}'), { timeout: 15_000 }).toBe(0);
});

test('the console opens its stream again after a 429, once a slot is free', async ({ page }) => {
  test.setTimeout(120_000);
  // Every slot of the server taken: the console's EventSource is answered 429, after which a
  // browser never retries by itself.
  const open = [];
  for (let i = 0; i < MAX_CLIENTS; i++) open.push(await stalledClient(server.port, '/api/v1/stream', `127.0.0.${30 + Math.floor(i / PER_ADDRESS)}`));
  await expect.poll(() => metricValue(server.url, 'leasehold_stream_clients{}')).toBe(MAX_CLIENTS);
  const refused = page.waitForResponse((response) => response.url().includes('/api/v1/stream') && response.status() === 429);
  await page.goto(`${server.url}/`);
  await refused;
  await expect(page.getByRole('status').filter({ hasText: 'Connecting…' })).toBeVisible();
  for (const client of open) client.socket.destroy();
  // Opened again after 5 to 10 s, and live.
  await expect(page.getByRole('status').filter({ hasText: 'Live' })).toBeVisible({ timeout: 20_000 });
});
