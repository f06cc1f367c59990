// Reading a JSON request body, for every route that takes one (POST /api/v1/demo, and the
// admin routes to come). In this order, each refusal a `{ error, message }` answer:
//   1. Host and Origin (lib/api/guard.ts): proxy.ts does not see a request that carries a
//      body to such a route, so that the body is never read before it is checked here;
//   2. Content-Type: application/json (415): a cross-site form or a text/plain fetch cannot
//      send it without the browser asking first (CORS preflight, which is not answered);
//   3. size: a Content-Length above the limit is refused before reading anything, and a body
//      without one is read only up to the limit (413);
//   4. UTF-8, then JSON.parse (400 invalid_body);
//   5. no string in it (nor a member's name) holds U+0000, which PostgreSQL cannot store in
//      text or jsonb (22021), or a lone UTF-16 surrogate (a \ud800-\udfff escape without its
//      pair), which jsonb refuses (22P02) and text would keep as U+FFFD: one rule for every
//      body, so that no schema can forget it; a 400 that names the field, where it would
//      otherwise have been a 500 from the store.
import { guardRequest } from './guard';
import { quoted, RequestRefusedError } from './refusal';

/** The largest body a route takes unless it says otherwise. */
export const DEFAULT_BODY_LIMIT_BYTES = 64 * 1024;

export type ReadJsonOptions = {
  /** The largest body accepted, in bytes. */
  limitBytes?: number;
};

/** The request's JSON body, checked as above; throws RequestRefusedError. */
export async function readJsonBody(request: Request, options: ReadJsonOptions = {}): Promise<unknown> {
  return (await readJsonText(request, options)).json;
}

/** The same, with the body's exact text (a webhook receiver checks the signature of the bytes sent). */
export async function readJsonText(request: Request, options: ReadJsonOptions = {}): Promise<{ json: unknown; text: string }> {
  const limit = options.limitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  guardRequest(request);
  checkJsonType(request);
  checkDeclaredSize(request, limit);
  return parseJsonBytes(await readUpTo(request, limit));
}

/**
 * The JSON body of a route whose body is optional (sign-out, replay), or undefined when it has
 * none. An empty body is no body: `fetch(url, { method: 'POST' })` sends `Content-Length: 0`
 * and no Content-Type, and is answered as if it had sent nothing, not with a 415. Anything
 * else is checked as readJsonBody checks it.
 */
export async function readOptionalJsonBody(request: Request, options: ReadJsonOptions = {}): Promise<unknown> {
  const limit = options.limitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  guardRequest(request);
  checkDeclaredSize(request, limit);
  const bytes = await readUpTo(request, limit);
  if (bytes.byteLength === 0) return undefined;
  checkJsonType(request);
  return parseJsonBytes(bytes).json;
}

function checkJsonType(request: Request) {
  const type = request.headers.get('content-type');
  if (!isJsonContentType(type)) {
    throw new RequestRefusedError(
      415,
      'unsupported_media_type',
      `The body must be JSON sent with "Content-Type: application/json", not ${type === null ? 'without a Content-Type' : `as ${quoted(type)}`}.`,
      { Accept: 'application/json' },
    );
  }
}

function checkDeclaredSize(request: Request, limit: number) {
  const declared = request.headers.get('content-length');
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > limit) throw tooLarge(limit, `${declared} bytes`);
}

function parseJsonBytes(bytes: Uint8Array): { json: unknown; text: string } {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw invalidBody('The body is not valid UTF-8 text.');
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw invalidBody(text.trim() === '' ? 'The body is empty: a JSON value was expected.' : 'The body is not valid JSON.');
  }
  const found = unstorablePath(json, []);
  if (found) throw invalidBody(`${found.path.length ? `The field "${found.path.join('.')}"` : 'The body'} holds ${UNSTORABLE[found.what]}, which cannot be stored: leave it out.`);
  return { json, text };
}

/** application/json, with at most a charset parameter of utf-8. */
export function isJsonContentType(value: string | null): boolean {
  if (value === null) return false;
  const [essence, ...parameters] = value.split(';').map((part) => part.trim().toLowerCase());
  if (essence !== 'application/json') return false;
  return parameters.every((parameter) => parameter === '' || /^charset="?utf-8"?$/.test(parameter));
}

/** What a string may hold that the store cannot keep. */
const UNSTORABLE = {
  nul: 'the character U+0000 (NUL)',
  surrogate: 'a lone UTF-16 surrogate (a \\ud800-\\udfff escape without its pair)',
} as const;
function unstorableIn(text: string): keyof typeof UNSTORABLE | null {
  if (text.includes('\u0000')) return 'nul';
  return text.isWellFormed() ? null : 'surrogate';
}

/**
 * Where the first string (or member name) holding what the store cannot keep (UNSTORABLE) is
 * in a parsed JSON value, as the path of member names and indexes (shown cut to 60 characters
 * each), with what it holds; or null. The value is no larger than the body limit, so the walk
 * is bounded by it; JSON nests only as deep as JSON.parse let it.
 */
function unstorablePath(value: unknown, path: string[]): { path: string[]; what: keyof typeof UNSTORABLE } | null {
  if (typeof value === 'string') {
    const what = unstorableIn(value);
    return what ? { path, what } : null;
  }
  if (value === null || typeof value !== 'object') return null;
  const entries = Array.isArray(value) ? value.map((item, index) => [String(index), item] as const) : Object.entries(value);
  for (const [name, item] of entries) {
    const here = [...path, quoted(name).slice(1, -1)];
    const what = unstorableIn(name);
    if (what) return { path: here, what };
    const found = unstorablePath(item, here);
    if (found) return found;
  }
  return null;
}

/** The body's bytes; stops reading (and cancels the rest) as soon as it has more than `limit`. */
async function readUpTo(request: Request, limit: number): Promise<Uint8Array> {
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge(limit, `more than ${limit} bytes`);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

function tooLarge(limit: number, found: string): RequestRefusedError {
  // Connection: close: what the client has not sent yet is not waited for.
  return new RequestRefusedError(413, 'body_too_large', `The body may be at most ${limit} bytes, not ${found}.`, { Connection: 'close' });
}

export function invalidBody(message: string): RequestRefusedError {
  return new RequestRefusedError(400, 'invalid_body', message);
}
