// Fetching the JSON API from the browser. Each read names the schema of what it expects
// (lib/domain/schemas, the routes' own): what comes back is checked against it, so a page
// never works on a shape it did not ask for. Errors carry the API's own sentence (docs/api.md:
// `{ error, message }`), or say plainly that the server could not be reached.
import { z } from 'zod';
import { apiErrorSchema } from '@/lib/domain/schemas/responses';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The error's whole body, for the answers that carry more (a 409 with the lease as it is now). */
    readonly body: unknown = undefined,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export function fetchJson<S extends z.ZodType>(path: string, schema: S, signal?: AbortSignal): Promise<z.output<S>> {
  // Plain GET, no extra headers or cache mode: a request the page preloaded (the overview's
  // lease list) is then answered from the preload. The API says no-store itself.
  return requestJson(path, { signal }, schema);
}

/**
 * A JSON body sent (POST, PATCH...), or none when `body` is undefined (DELETE), the answer
 * checked against `schema` as fetchJson checks it. An answer without content (204) is read as
 * null: its schema is `noContent`.
 */
export function sendJson<S extends z.ZodType>(path: string, method: string, body: unknown, schema: S): Promise<z.output<S>> {
  const init: RequestInit = body === undefined ? { method } : { method, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) };
  return requestJson(path, init, schema);
}

/** The schema of an answer without content (204: a DELETE done). */
export const noContent = z.null();

async function requestJson<S extends z.ZodType>(path: string, init: RequestInit, schema: S): Promise<z.output<S>> {
  const { signal } = init;
  let response: Response;
  try {
    response = await fetch(path, init);
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new ApiError(0, 'unreachable', 'The Leasehold server did not answer. Is it running?');
  }
  let body: unknown = null; // a 204 has none
  if (response.status !== 204) {
    try {
      body = await response.json();
    } catch (error) {
      if (signal?.aborted) throw error;
      body = undefined; // not JSON: said below
    }
  }
  if (response.ok) {
    const parsed = schema.safeParse(body);
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0];
    throw new ApiError(response.status, 'unexpected_answer', `The server's answer to ${path} is not what this page expects (${issue ? `${issue.path.join('.') || 'the answer'}: ${issue.message}` : 'unreadable'}). Reload the page: the server may have been upgraded.`);
  }
  const error = apiErrorSchema.partial().safeParse(body);
  const { error: code, message } = error.success ? error.data : {};
  throw new ApiError(response.status, code ?? `http_${response.status}`, message ?? `The server answered ${response.status}.`, body);
}
