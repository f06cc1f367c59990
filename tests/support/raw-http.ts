// HTTP/1.1 over a plain socket, for tests that must send what fetch and node:http refuse or
// rewrite: any method (TRACE, PROPFIND), any Host (or none), a request target with malformed
// percent-escapes, a Content-Length the body never reaches, a body in chunks. Loopback only.
import net from 'node:net';

export type RawRequest = {
  method: string;
  /** The request target exactly as sent ("/api/v1/leases/%ZZ?since=0000-01-01"). */
  target: string;
  /** Header lines as sent, in order; a Host header only if listed (null value: the line is left out). */
  headers?: [string, string | null][];
  body?: Uint8Array;
  /** How the body goes: with its Content-Length (default), in chunks, or with `declaredLength` and only `body` sent. */
  bodyMode?: 'length' | 'chunked' | 'declared';
  declaredLength?: number;
  /** In chunked mode, a pause between chunks: time for an early answer to be read before the next write could fail on a closed connection. */
  chunkDelayMs?: number;
  timeoutMs?: number;
};

export type RawResponse = {
  /** 0 when the server closed the connection without an answer. */
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Milliseconds from sending to the end of the answer's headers. */
  headersAfterMs: number;
  /** Bytes of the body written to the socket before the answer came. */
  bodyBytesSent: number;
  /**
   * The connection was reset before an answer was read: a server that answers (400, 413)
   * and closes while a body is still coming resets it, and the answer may be lost with it.
   */
  reset: boolean;
};

const encoder = new TextEncoder();

/** Sends one request on a connection of its own (Connection: close) and reads the answer. Streams (text/event-stream) are cut after their headers. */
export function rawRequest(port: number, request: RawRequest): Promise<RawResponse> {
  const timeoutMs = request.timeoutMs ?? 15_000;
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let headerEnd = -1;
    let status = 0;
    let headers: Record<string, string> = {};
    let headersAt = 0;
    let started = 0;
    let sent = 0;
    let reset = false;
    let done = false;
    const finish = (error?: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      if (error) return reject(error);
      const all = Buffer.concat(chunks);
      const rawBody = headerEnd < 0 ? Buffer.alloc(0) : all.subarray(headerEnd + 4);
      const body = headers['transfer-encoding']?.includes('chunked') ? dechunk(rawBody) : rawBody;
      resolve({ status, headers, body: body.toString('utf8'), headersAfterMs: headersAt - started, bodyBytesSent: sent, reset });
    };
    const timer = setTimeout(
      () => finish(new Error(`no complete answer within ${timeoutMs} ms to ${request.method} ${request.target.slice(0, 200)} (got: ${JSON.stringify(Buffer.concat(chunks).toString('latin1').slice(0, 200))})`)),
      timeoutMs,
    );
    socket.on('connect', () => {
      started = Date.now();
      const lines = [`${request.method} ${request.target} HTTP/1.1`];
      for (const [name, value] of request.headers ?? []) if (value !== null) lines.push(`${name}: ${value}`);
      lines.push('Connection: close');
      const body = request.body;
      const mode = request.bodyMode ?? 'length';
      if (body !== undefined) {
        if (mode === 'chunked') lines.push('Transfer-Encoding: chunked');
        else lines.push(`Content-Length: ${mode === 'declared' ? request.declaredLength : body.byteLength}`);
      }
      socket.write(Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'));
      if (body === undefined) return;
      if (mode === 'chunked') {
        // In pieces of 16 KiB, stopping as soon as the server has answered.
        let at = 0;
        const next = () => {
          if (done || headerEnd >= 0) return;
          if (at >= body.byteLength) return void socket.write('0\r\n\r\n');
          const piece = body.subarray(at, at + 16_384);
          at += piece.byteLength;
          sent += piece.byteLength;
          const delay = request.chunkDelayMs ?? 0;
          socket.write(Buffer.concat([encoder.encode(`${piece.byteLength.toString(16)}\r\n`), piece, encoder.encode('\r\n')]), () => (delay > 0 ? setTimeout(next, delay) : setImmediate(next)));
        };
        next();
      } else {
        sent = body.byteLength;
        socket.write(body);
      }
    });
    socket.on('data', (data: Buffer) => {
      chunks.push(data);
      if (headerEnd < 0) {
        const all = Buffer.concat(chunks);
        headerEnd = all.indexOf('\r\n\r\n');
        if (headerEnd >= 0) {
          headersAt = Date.now();
          const head = all.subarray(0, headerEnd).toString('latin1').split('\r\n');
          status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head[0] ?? '')?.[1] ?? 0);
          headers = {};
          for (const line of head.slice(1)) {
            const colon = line.indexOf(':');
            if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
          }
          if (headers['content-type']?.startsWith('text/event-stream')) finish();
        }
      }
    });
    // The server may close its side while we still send (a refused body): the answer counts.
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (headerEnd >= 0) return finish();
      if (error.code === 'EPIPE' || error.code === 'ECONNRESET') {
        reset = true;
        return finish();
      }
      finish(error);
    });
    socket.on('end', () => finish());
    socket.on('close', () => finish());
  });
}

function dechunk(data: Buffer): Buffer {
  const out: Buffer[] = [];
  let at = 0;
  while (at < data.length) {
    const lineEnd = data.indexOf('\r\n', at);
    if (lineEnd < 0) break;
    const size = parseInt(data.subarray(at, lineEnd).toString('latin1'), 16);
    if (!Number.isFinite(size) || size === 0) break;
    out.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(out);
}
