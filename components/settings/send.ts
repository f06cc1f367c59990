// A JSON request from an admin form to the API (none sent when `body` is undefined), its answer
// checked against the route's schema (lib/domain/schemas; `noContent` for a 204) as every
// fetch of the console is (components/live/api.ts); the error's own sentence when refused.
import type { z } from 'zod';
import { ApiError, sendJson as send } from '../live/api';

export { noContent } from '../live/api';

export type Sent<T> = { ok: true; data: T } | { ok: false; message: string };

export async function sendJson<S extends z.ZodType>(method: string, url: string, body: unknown, schema: S): Promise<Sent<z.output<S>>> {
  try {
    return { ok: true, data: await send(url, method, body, schema) };
  } catch (error) {
    return { ok: false, message: error instanceof ApiError && error.status !== 0 ? error.message : 'The server cannot be reached.' };
  }
}
