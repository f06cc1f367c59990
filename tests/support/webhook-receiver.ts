// A webhook receiver for the tests: a real HTTP server on 127.0.0.1 that verifies every
// request's signature with the `standardwebhooks` package (an implementation independent of
// Leasehold's) and keeps what it received. It can be told to answer with an error first, or to
// misbehave until told otherwise: hang (never answer), answer slowly, or answer one status.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export type Received = { id: string; timestamp: string; verified: boolean; error: string | null; body: unknown; path: string; at: number };

/** How the receiver answers every request until told otherwise. */
export type Behaviour = { kind: 'ok' } | { kind: 'hang' } | { kind: 'slow'; ms: number } | { kind: 'status'; status: number };

export type Receiver = {
  url: string;
  received: Received[];
  /** Answer the next requests with these statuses (then 200). */
  failNext(...statuses: number[]): void;
  /** Answer every request to this path with this status (the URL's path, e.g. "/hook/failing"). */
  failPath(path: string, status: number): void;
  behave(behaviour: Behaviour): void;
  close(): Promise<void>;
};

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

/** `secret()`: the endpoint's whsec_ secret, asked at each request (it is made after the receiver). */
export async function startReceiver(secret: () => string | null): Promise<Receiver> {
  const received: Received[] = [];
  const failures: number[] = [];
  const failingPaths = new Map<string, number>();
  let behaviour: Behaviour = { kind: 'ok' };
  const server: Server = createServer(async (request, response) => {
    const raw = await readBody(request);
    const headers = { 'webhook-id': String(request.headers['webhook-id'] ?? ''), 'webhook-timestamp': String(request.headers['webhook-timestamp'] ?? ''), 'webhook-signature': String(request.headers['webhook-signature'] ?? '') };
    let verified = false;
    let error: string | null = null;
    try {
      const key = secret();
      if (!key) throw new Error('no secret');
      new Webhook(key).verify(raw, headers);
      verified = true;
    } catch (e) {
      error = (e as Error).message;
    }
    let body: unknown = null;
    try {
      body = JSON.parse(raw);
    } catch {
      body = raw;
    }
    received.push({ id: headers['webhook-id'], timestamp: headers['webhook-timestamp'], verified, error, body, path: request.url ?? '/', at: Date.now() });
    const now = behaviour;
    if (now.kind === 'hang') return; // the request stays open until the server closes
    if (now.kind === 'slow') await new Promise((resolve) => setTimeout(resolve, now.ms));
    const status = failingPaths.get(request.url ?? '/') ?? failures.shift() ?? (now.kind === 'status' ? now.status : 200);
    if (!response.destroyed) response.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'not now');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    failNext: (...statuses) => failures.push(...statuses),
    failPath: (path, status) => failingPaths.set(path, status),
    behave: (b) => (behaviour = b),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
