// A route's JSON answer, declared with its schema (lib/domain/schemas): `reply(schema, value)`.
// The value's type is the schema's, so the compiler holds the route to what docs/api.md
// promises; outside production the value is checked against the schema as well, and an answer
// that does not match is a bug (a 500 with a reference, the mismatch in the server log) rather
// than a shape a reader did not expect. The bytes sent are the value's JSON as it is: the
// schema checks, it does not reshape (nothing stripped, nothing added).
import type { z } from 'zod';

/** Whether answers are checked against their schemas: everywhere but production (tests, `next dev`). */
export const checksReplies = () => process.env.NODE_ENV !== 'production';

/** Answers larger than this are not parsed again to be checked (the lease list of 10,000 leases is 5 MB). */
const MAX_CHECKED_BYTES = 1024 * 1024;

export class ReplyShapeError extends Error {
  constructor(what: string, issues: readonly z.core.$ZodIssue[]) {
    const first = issues[0];
    super(`${what} does not match its schema: ${first ? `${first.path.join('.') || '(the answer)'}: ${first.message}` : 'unknown'}${issues.length > 1 ? ` (and ${issues.length - 1} more)` : ''}`);
    this.name = 'ReplyShapeError';
  }
}

/** Throws ReplyShapeError when `value` is not what `schema` says (only where replies are checked). */
export function checkReply<S extends z.ZodType>(schema: S, value: unknown, what = 'the answer'): void {
  if (!checksReplies()) return;
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new ReplyShapeError(what, parsed.error.issues);
}

/** The answer `value` as JSON, with `Cache-Control: no-store` unless `init` says otherwise. */
export function reply<S extends z.ZodType>(schema: S, value: z.input<S>, init: { status?: number; headers?: HeadersInit } = {}): Response {
  checkReply(schema, value);
  const headers = new Headers(init.headers);
  if (!headers.has('Cache-Control')) headers.set('Cache-Control', 'no-store');
  return Response.json(value, { status: init.status, headers });
}

/** An answer already assembled as UTF-8 JSON bytes (the lease list), checked as `reply` checks when not too large. */
export function checkReplyBytes<S extends z.ZodType>(schema: S, body: Uint8Array): void {
  if (!checksReplies() || body.byteLength > MAX_CHECKED_BYTES) return;
  checkReply(schema, JSON.parse(Buffer.from(body).toString('utf8')) as unknown);
}
