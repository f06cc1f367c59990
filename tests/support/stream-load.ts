// What the live stream's backpressure test and benchmark share (tests/e2e/stream-backpressure.spec.ts,
// bench/stream-bench.ts): a Leasehold server of their own that observes a Redis prefix, a load
// of renewals on that prefix (each one a `lease` message on the stream), clients over raw
// sockets that do not read, and the server's resident memory.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { createPostgresDatabase, freshPgliteDirectory } from './databases';
import { testServices } from './services';

export type StreamServer = {
  url: string;
  port: number;
  /** The next-server process (the one that holds the bus and the streams). */
  pid: number;
  prefix: string;
  source: string;
  stop(): Promise<void>;
};

/**
 * `npm start`'s server (scripts/start.ts of `root`, which must be built) on a fresh store,
 * observing keys `<prefix>*` of the test Redis and nothing else (no demo). The store is a new
 * database on the test PostgreSQL by default: the embedded one (PGlite) grows its WebAssembly
 * heap inside the server's process as the collector writes, which would blur its memory.
 */
export async function startStreamServer(options: {
  root: string;
  port: number;
  prefix: string;
  store?: 'postgres' | 'pglite';
  env?: Record<string, string>;
  log?: boolean;
}): Promise<StreamServer> {
  const services = testServices();
  // Another server on the port would answer the health check in its place.
  const taken = await new Promise<boolean>((resolve) => {
    const probe = net.connect({ host: '127.0.0.1', port: options.port });
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
  if (taken) throw new Error(`port ${options.port} is already in use`);
  const configDir = mkdtempSync(path.join(os.tmpdir(), 'leasehold-stream-config-'));
  const configFile = path.join(configDir, 'leasehold.config.json');
  const source = 'redis-stream';
  writeFileSync(configFile, JSON.stringify({ pollMs: 1000, sources: [{ name: source, backend: 'redis', urls: [services.redisUrl], match: [`${options.prefix}*`] }] }));
  const env: NodeJS.ProcessEnv = { ...process.env, LEASEHOLD_ANONYMOUS_ROLE: 'viewer', PORT: String(options.port), HOST: '127.0.0.1', LEASEHOLD_CONFIG: configFile, ...options.env };
  delete env.LEASEHOLD_DEMO;
  let removeStore: () => Promise<void> | void;
  if (options.store === 'pglite') {
    const store = await freshPgliteDirectory();
    env.LEASEHOLD_DATA_DIR = store.dataDir;
    delete env.DATABASE_URL;
    removeStore = () => store.remove();
  } else {
    const db = await createPostgresDatabase('lh_stream');
    env.DATABASE_URL = db.url;
    removeStore = () => db.drop();
  }
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
    cwd: options.root,
    env,
    stdio: ['ignore', options.log ? 'inherit' : 'ignore', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${options.port}`;
  const cleanup = async () => {
    await removeStore();
    rmSync(configDir, { recursive: true, force: true });
  };
  for (let waited = 0; ; waited += 250) {
    if (child.exitCode !== null || waited > 120_000) {
      child.kill('SIGTERM');
      await exited;
      await cleanup();
      throw new Error(`the stream test server on port ${options.port} did not become healthy`);
    }
    const ok = await fetch(`${url}/api/health`).then((r) => r.ok, () => false);
    if (ok) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const pid = childPids(child.pid!)[0];
  if (pid === undefined) throw new Error('no next-server process under scripts/start.ts');
  return {
    url,
    port: options.port,
    pid,
    prefix: options.prefix,
    source,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(killer);
      }
      await cleanup();
    },
  };
}

function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Resident memory of a process, in bytes. */
export function rssBytes(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : NaN;
}

/**
 * `keys` Redis locks under `prefix`, each renewed (PEXPIRE) `perSecond / keys` times a second,
 * spread over ticks of 50 ms: the server publishes a `lease` message for each renewal it sees.
 */
export async function startRenewals(options: { prefix: string; keys: number; perSecond: number }) {
  const redis = new Redis(testServices().redisUrl);
  const names = Array.from({ length: options.keys }, (_, i) => `${options.prefix}job-${i}`);
  const create = redis.pipeline();
  for (const name of names) create.set(name, `worker-${name.slice(-4)}:1`, 'PX', 60_000);
  await create.exec();
  let stopped = false;
  let renewed = 0;
  let next = 0;
  const TICK_MS = 50;
  const loop = (async () => {
    const started = Date.now();
    for (let tick = 1; !stopped; tick++) {
      const due = Math.floor((tick * TICK_MS * options.perSecond) / 1000) - renewed;
      if (due > 0) {
        const batch = redis.pipeline();
        for (let i = 0; i < due; i++) batch.pexpire(names[next++ % names.length]!, 60_000);
        await batch.exec();
        renewed += due;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + tick * TICK_MS - Date.now())));
    }
  })();
  return {
    renewed: () => renewed,
    async stop() {
      stopped = true;
      await loop;
      const remove = redis.pipeline();
      for (const name of names) remove.del(name);
      await remove.exec();
      redis.disconnect();
    },
  };
}

/**
 * A client that sends GET `path` and never reads what comes back (its socket paused: the
 * kernel's buffers fill, then the server's). `localAddress` picks the loopback address it
 * comes from (127.0.0.0/8), for the caps per address.
 */
export async function stalledClient(port: number, pathAndQuery: string, localAddress = '127.0.0.1', headers: Record<string, string> = {}) {
  const socket = net.connect({ host: '127.0.0.1', port, localAddress });
  socket.pause();
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  socket.on('error', () => {});
  const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  socket.write(`GET ${pathAndQuery} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\n${extra}\r\n`);
  return {
    socket,
    /** Starts reading: everything the server sent, until it closes (or `timeoutMs` passes). */
    readToEnd(timeoutMs: number): Promise<{ ended: boolean; bytes: Buffer }> {
      const chunks: Buffer[] = [];
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          socket.destroy();
          resolve({ ended: false, bytes: Buffer.concat(chunks) });
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          resolve({ ended: true, bytes: Buffer.concat(chunks) });
        };
        socket.on('data', (chunk: Buffer) => chunks.push(chunk));
        socket.once('end', done);
        socket.once('close', done);
        socket.resume();
      });
    },
  };
}

/** The body of a raw HTTP/1.1 response with chunked encoding, as far as it came whole. */
export function dechunk(raw: Buffer): { status: number; body: string } {
  const headerEnd = raw.indexOf('\r\n\r\n');
  if (headerEnd < 0) return { status: 0, body: '' };
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(raw.subarray(0, headerEnd).toString('latin1'))?.[1] ?? 0);
  const parts: Buffer[] = [];
  let at = headerEnd + 4;
  for (;;) {
    const lineEnd = raw.indexOf('\r\n', at);
    if (lineEnd < 0) break;
    const size = parseInt(raw.subarray(at, lineEnd).toString('latin1'), 16);
    if (!Number.isFinite(size) || size === 0) break;
    const start = lineEnd + 2;
    parts.push(raw.subarray(start, Math.min(start + size, raw.length)));
    if (start + size + 2 > raw.length) break;
    at = start + size + 2;
  }
  return { status, body: Buffer.concat(parts).toString('utf8') };
}

export type SseMessage = { id: string | null; event: string; data: string };

/** The whole messages of a Server-Sent Events text (an unfinished last one is left out, as EventSource does). */
export function parseSse(text: string): SseMessage[] {
  const blocks = text.split('\n\n');
  blocks.pop();
  const messages: SseMessage[] = [];
  for (const block of blocks) {
    const lines = block.split('\n').filter((line) => !line.startsWith(':'));
    if (lines.length === 0) continue;
    const field = (name: string) => lines.find((line) => line.startsWith(`${name}: `))?.slice(name.length + 2) ?? null;
    messages.push({ id: field('id'), event: field('event') ?? 'message', data: field('data') ?? '' });
  }
  return messages;
}

/** Reads a stream with fetch and counts its messages for `ms` (a client that does read). */
export async function readStream(url: string, ms: number, headers: Record<string, string> = {}): Promise<{ status: number; messages: SseMessage[]; bytes: number }> {
  const controller = new AbortController();
  const response = await fetch(url, { headers, signal: controller.signal });
  const messages: SseMessage[] = [];
  let bytes = 0;
  if (!response.body) return { status: response.status, messages, bytes };
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const timer = setTimeout(() => controller.abort(), ms);
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      bytes += value.byteLength;
      text += decoder.decode(value, { stream: true });
      const cut = text.lastIndexOf('\n\n');
      if (cut >= 0) {
        messages.push(...parseSse(text.slice(0, cut + 2)));
        text = text.slice(cut + 2);
      }
    }
  } catch {
    // aborted at the end of the window
  } finally {
    clearTimeout(timer);
  }
  return { status: response.status, messages, bytes };
}

/**
 * A series of GET /metrics, by its full name with labels (`leasehold_stream_clients{}`); null
 * when absent. A series without labels may be written with or without `{}`: the same series.
 */
export async function metricValue(url: string, series: string): Promise<number | null> {
  let text = '';
  for (let attempt = 1; ; attempt++) {
    try {
      text = await (await fetch(`${url}/metrics`)).text();
      break;
    } catch (error) {
      // A keep-alive connection the server closed just as it was reused (ECONNRESET): again.
      if (attempt === 3) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  const names = series.endsWith('{}') ? [series, series.slice(0, -2)] : [series];
  for (const line of text.split('\n')) for (const name of names) if (line.startsWith(`${name} `)) return Number(line.slice(name.length + 1));
  return null;
}

/** One request over a raw socket from `localAddress`, read to its end (Connection: close), or for 5 s when it is a stream. */
export async function rawRequest(port: number, pathAndQuery: string, localAddress: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const socket = net.connect({ host: '127.0.0.1', port, localAddress });
  const chunks: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      // A stream does not end: its head is enough.
      const head = Buffer.concat(chunks).toString('latin1');
      if (head.includes('\r\n\r\n') && /content-type: text\/event-stream/i.test(head)) socket.destroy();
    });
    socket.once('error', reject);
    socket.once('close', () => resolve());
    setTimeout(() => socket.destroy(), 5_000).unref();
    socket.write(`GET ${pathAndQuery} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`);
  });
  const raw = Buffer.concat(chunks);
  const headerEnd = raw.indexOf('\r\n\r\n');
  const head = raw.subarray(0, headerEnd < 0 ? raw.length : headerEnd).toString('latin1');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const body = headers['transfer-encoding'] === 'chunked' ? dechunk(raw).body : raw.subarray(headerEnd + 4).toString('utf8');
  return { status: Number(statusLine.split(' ')[1]), headers, body };
}

/** A client that reads the stream as fast as it comes and only counts it (the peer of stalledClient). */
export async function readingClient(port: number, pathAndQuery: string, localAddress = '127.0.0.1') {
  const socket = net.connect({ host: '127.0.0.1', port, localAddress });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  const state = { bytes: 0, ended: false };
  socket.on('error', () => {});
  socket.on('data', (chunk: Buffer) => (state.bytes += chunk.length));
  socket.once('close', () => (state.ended = true));
  socket.write(`GET ${pathAndQuery} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\n\r\n`);
  return { socket, state };
}

/** CPU time a process has used (user + system), in seconds. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
