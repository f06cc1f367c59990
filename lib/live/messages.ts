// The live stream's messages (GET /api/v1/stream, docs/api.md) as a zod schema, for whoever
// reads the stream: the browser included, so this file imports zod and lib/domain's
// vocabulary only (the bus's type is imported as a type, which is erased).
//
// On the wire, each message is an SSE block `event: <type>` + `data: <JSON of the payload>`
// (lib/live/stream.ts render); here, as on the bus, a message is `{ type, lease | event | source }`.
// parseStreamMessage takes either form and answers null, never throws, for anything that is
// not a message: malformed JSON, an unknown type, a missing or mistyped field, more than
// MAX_STREAM_MESSAGE_CHARS of data.
import { z } from 'zod';
import { leaseEventViewSchema, leaseViewSchema, sourceStatusSchema } from '../domain/schemas/lease';
import type { BusMessage } from './bus';

/**
 * The most data one message may hold, in UTF-16 units, checked before it is parsed. A lease is
 * a few kB (its texts are bounded by the collector: keys and holders over 1 kB are kept as
 * their head and a digest, at most 100 candidates); the server drops a client whose queue
 * holds 4 MB.
 */
export const MAX_STREAM_MESSAGE_CHARS = 1024 * 1024;

// The objects are lib/domain's schemas (schemas/lease.ts), the API's as well: here for the
// stream's readers that import them from here.
export { candidateSchema, leaseEventViewSchema, leaseViewSchema, SOURCE_STATUSES, sourceStatusSchema as sourceViewSchema } from '../domain/schemas/lease';

export const streamMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('lease'), lease: leaseViewSchema }),
  z.object({ type: z.literal('event'), event: leaseEventViewSchema }),
  z.object({ type: z.literal('source'), source: sourceStatusSchema }),
]);

export type StreamMessage = z.infer<typeof streamMessageSchema>;
export type StreamMessageType = StreamMessage['type'];

/** `hello`, first on every connection: where the stream starts, and whether messages were missed. */
export const streamHelloSchema = z.object({ position: z.string().max(64), gap: z.boolean() });
export type StreamHello = z.infer<typeof streamHelloSchema>;

// The schema and the bus agree: each is the other (a compile error here when one changes alone).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _schemaIsTheBus: Same<StreamMessage, BusMessage> = true;
void _schemaIsTheBus;

const PAYLOAD_KEY = { lease: 'lease', event: 'event', source: 'source' } as const satisfies Record<StreamMessageType, StreamMessageType>;

function parseJson(data: string): unknown {
  if (typeof data !== 'string' || data.length > MAX_STREAM_MESSAGE_CHARS) return undefined;
  try {
    return JSON.parse(data) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * A stream message, or null when `data` is not one. Without `event`: `data` is a whole message,
 * `{ "type": "lease", "lease": {...} }` (as the bus holds it). With `event` (an EventSource's
 * MessageEvent.type: lease, event or source): `data` is that message's payload, as the server
 * sends it (`parseStreamMessage(message.data, message.type)`).
 */
export function parseStreamMessage(data: string, event?: string): StreamMessage | null {
  const json = parseJson(data);
  if (json === undefined) return null;
  const candidate = event === undefined ? json : Object.hasOwn(PAYLOAD_KEY, event) ? { type: event, [event]: json } : null;
  const parsed = streamMessageSchema.safeParse(candidate);
  return parsed.success ? parsed.data : null;
}

/** The hello message's data, or null when it is not one. */
export function parseStreamHello(data: string): StreamHello | null {
  const parsed = streamHelloSchema.safeParse(parseJson(data));
  return parsed.success ? parsed.data : null;
}
