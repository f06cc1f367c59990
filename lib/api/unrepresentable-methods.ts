// Methods a fetch Request cannot carry. Next.js turns every request into one before proxy.ts
// or a route handler runs, and undici refuses TRACE ("'TRACE' HTTP method is unsupported"):
// Next would answer 500 with its own page. The only place in front of that is the HTTP
// server itself, so the server's 'request' event is answered here for it, with the API's
// error shape, before Next sees it. The same place stamps each request with the address of
// its socket, which Next does not pass on to route handlers. (Node's parser answers TRACK 400 itself, and emits
// 'connect' for CONNECT, which a server without a listener closes.)
import http from 'node:http';
import { PEER_HEADER } from './peer';
import { allowedMethods, methodNotAllowed } from './refusal';

const UNREPRESENTABLE = new Set(['TRACE']);
// The patched emit carries this mark: whichever copy of this module runs next (Next loads it
// more than once) sees the patch on the prototype itself and leaves it.
const GUARD = Symbol.for('leasehold.methodGuard');

/**
 * Answers TRACE with 405 and the path's Allow, and stamps every request with its socket's
 * address (PEER_HEADER), on every HTTP server of this process. Idempotent.
 */
export function refuseUnrepresentableMethods(): void {
  const emit = http.Server.prototype.emit as typeof http.Server.prototype.emit & { [GUARD]?: true };
  if (emit[GUARD]) return;
  const guarded = function (this: http.Server, event: string | symbol, ...args: unknown[]) {
    if (event === 'request') {
      const [request, response] = args as [http.IncomingMessage, http.ServerResponse];
      // The address the request came from, which a route handler cannot see: stamped here,
      // over anything the client sent under that name (lib/live/stream.ts counts by it).
      request.headers[PEER_HEADER] = request.socket.remoteAddress ?? '';
      // A path with a malformed percent-escape: Next answers it with a bare 500 while decoding
      // route parameters, before any handler runs, and a request with a body to a route that
      // reads one never passes proxy.ts (which answers it for the others). A 400 here, for all.
      const target = (request.url ?? '/').split('?')[0]!;
      if (!decodable(target)) {
        const message = 'The request path holds a malformed percent-escape (such as "%E0%A4%A"): encode lease ids with encodeURIComponent.';
        const api = allowedMethods(target) !== null;
        response.writeHead(400, { 'Content-Type': api ? 'application/json' : 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', Connection: 'close' });
        response.end(api ? JSON.stringify({ error: 'invalid_path', message }) : `400 Bad Request: ${message}\n`);
        return true;
      }
      if (UNREPRESENTABLE.has(request.method ?? '')) {
        const path = (request.url ?? '/').split('?')[0]!;
        const refusal = methodNotAllowed(request.method!, allowedMethods(path) ?? ['GET', 'HEAD', 'OPTIONS']);
        const body = JSON.stringify({ error: refusal.code, message: refusal.message });
        response.writeHead(refusal.status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', ...refusal.headers });
        response.end(body);
        return true;
      }
    }
    return (emit as (this: http.Server, event: string | symbol, ...args: unknown[]) => boolean).call(this, event, ...args);
  } as typeof emit;
  guarded[GUARD] = true;
  http.Server.prototype.emit = guarded;
}

function decodable(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}
