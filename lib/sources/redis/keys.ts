// Reading lock keys from one Redis instance: SCAN for the configured patterns, then one Lua
// script per batch that sends each key's type, value (or its first bytes, length and SHA-1),
// PTTL and fence; and decoding what it sent (keys, holders, fence counters).
import type Redis from 'ioredis';
import { displayText, EXACT_TEXT_HEAD_BYTES, EXACT_TEXT_MAX_BYTES } from '../../domain/display';
import { exactOf, exactOfHead } from '../exact';
import type { Progress } from '../types';

const SCAN_COUNT = 1_000;
const READ_BATCH = 500;
/** A fence counter is an INCR counter: at most 20 digits. Anything longer is not one. */
const FENCE_MAX_BYTES = 24;

// For each key, seven entries in one flat list (cheaper to decode than nested ones): its
// type; its value when it is a string of at most ARGV[3] bytes, else its first ARGV[2] bytes;
// its length; the SHA-1 of a longer value; its PTTL; its fence's first bytes and length.
export const READ_KEYS = `
local out = {}
local n = 0
local head = tonumber(ARGV[2])
local whole = tonumber(ARGV[3])
local fenceMax = tonumber(ARGV[4])
for _, k in ipairs(KEYS) do
  local t = redis.call('TYPE', k)['ok']
  local v = false
  local len = 0
  local digest = false
  if t == 'string' then
    len = redis.call('STRLEN', k)
    if len <= whole then
      v = redis.call('GET', k)
    else
      v = redis.call('GETRANGE', k, 0, head - 1)
      digest = redis.sha1hex(redis.call('GET', k))
    end
  end
  local f = false
  local flen = 0
  local fk = k .. ARGV[1]
  if redis.call('TYPE', fk)['ok'] == 'string' then
    flen = redis.call('STRLEN', fk)
    f = redis.call('GETRANGE', fk, 0, fenceMax - 1)
  end
  out[n + 1] = t
  out[n + 2] = v
  out[n + 3] = len
  out[n + 4] = digest
  out[n + 5] = redis.call('PTTL', k)
  out[n + 6] = f
  out[n + 7] = flen
  n = n + 7
end
return out`;
const FIELDS = 7;

export type RawKey = string; // the key's bytes as a latin1 string: exact, and usable as a Map key and an argument
/** What one instance said of one key. `head`: the value, or its first bytes when `length` is more. */
export type KeyRead = { type: string; head: Buffer | null; length: number; digest: string | null; pttl: number; fence: Buffer | null; fenceLength: number };
export type ReaderRedis = Redis & { readKeysBuffer(...args: (string | Buffer | number)[]): Promise<(Buffer | number | null)[]> };
export const ABSENT: KeyRead = { type: 'none', head: null, length: 0, digest: null, pttl: -2, fence: null, fenceLength: 0 };

const toBuffer = (raw: RawKey) => Buffer.from(raw, 'latin1');
/** A key as a command argument: ASCII as a string (one write), anything else as its exact bytes. */
// eslint-disable-next-line no-control-regex -- ASCII is the point
const toArgument = (raw: RawKey) => (/^[\x00-\x7f]*$/.test(raw) ? raw : toBuffer(raw));
const PLAIN_ASCII = /^[\x20-\x5b\x5d-\x7e]*$/;
/** A key's exact text: its identity (most keys are plain ASCII and are their own text). */
export const keyOf = (raw: RawKey) => (raw.length <= EXACT_TEXT_MAX_BYTES && PLAIN_ASCII.test(raw) ? raw : exactOf(toBuffer(raw)));
export const isCounter = (value: Buffer | null, length: number) => value !== null && length <= 20 && value.length === length && /^\d+$/.test(value.toString('latin1'));
/** The holder: the exact text of the value (lib/domain/display.ts), from Redis's head, length and SHA-1. */
export const holderOf = (view: KeyRead) => exactOfHead(view.head!, view.length, view.digest ? `sha1:${view.digest.slice(0, 32)}` : null);
/** The fencing token: the fence counter's number, when it is one. */
export const tokenOf = (v: KeyRead) => (isCounter(v.fence, v.fenceLength) ? BigInt(v.fence!.toString('latin1')) : null);
/** What is wrong with a fence that is there but is not a counter; null when nothing is. */
export const fenceProblem = (v: KeyRead) =>
  v.fence !== null && !isCounter(v.fence, v.fenceLength)
    ? `the fence counter holds "${displayText(v.fence, 20)}"${v.fenceLength > v.fence.length ? ` (${v.fenceLength} bytes)` : ''}, not a number`
    : null;

/**
 * An answer no Redis server gives to this call (a SCAN that is not a cursor and a list of
 * keys): something else listens on that port, or the connection, made to a closed local port
 * in the ephemeral range, ended up connected to itself and echoes every command back.
 */
export class UnexpectedAnswerError extends Error {
  constructor(readonly command: string) {
    super(`an answer to ${command} unlike any Redis server's`);
    this.name = 'UnexpectedAnswerError';
  }
}

const isScanReply = (reply: unknown): reply is [Buffer, Buffer[]] => Array.isArray(reply) && reply.length === 2 && Buffer.isBuffer(reply[0]) && Array.isArray(reply[1]) && reply[1].every((key) => Buffer.isBuffer(key));
const isBulkOrNull = (value: unknown) => value === null || Buffer.isBuffer(value);
const isInteger = (value: unknown) => typeof value === 'number' && Number.isInteger(value);

/** Every key of one instance matching one of the patterns, found with SCAN (never KEYS). */
export async function scanInstance(redis: Redis, match: string[], signal: AbortSignal, progress?: Progress): Promise<Set<RawKey>> {
  const keys = new Set<RawKey>();
  for (const pattern of match) {
    let cursor = '0';
    do {
      if (signal.aborted) throw new Error('the read was cancelled');
      const reply: unknown = await redis.scanBuffer(cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT);
      if (!isScanReply(reply)) throw new UnexpectedAnswerError('SCAN');
      const [next, found] = reply;
      cursor = next.toString('latin1');
      for (const key of found) keys.add(key.toString('latin1'));
      progress?.();
    } while (cursor !== '0');
  }
  return keys;
}

/** What one instance says of these keys (and of their fences, `suffix` appended), in batches. */
export async function readInstance(redis: ReaderRedis, keys: RawKey[], suffix: string, progress?: Progress): Promise<Map<RawKey, KeyRead>> {
  const reads = new Map<RawKey, KeyRead>();
  for (let i = 0; i < keys.length; i += READ_BATCH) {
    const batch = keys.slice(i, i + READ_BATCH);
    const flat: unknown[] = await redis.readKeysBuffer(batch.length, ...batch.map(toArgument), suffix, EXACT_TEXT_HEAD_BYTES, EXACT_TEXT_MAX_BYTES, FENCE_MAX_BYTES);
    if (!Array.isArray(flat) || flat.length !== batch.length * FIELDS) throw new UnexpectedAnswerError('the key-reading script');
    for (let index = 0; index < batch.length; index++) {
      const at = index * FIELDS;
      const fields = [Buffer.isBuffer(flat[at]), isBulkOrNull(flat[at + 1]), isInteger(flat[at + 2]), isBulkOrNull(flat[at + 3]), isInteger(flat[at + 4]), isBulkOrNull(flat[at + 5]), isInteger(flat[at + 6])];
      if (fields.includes(false)) throw new UnexpectedAnswerError('the key-reading script');
      const digest = flat[at + 3] as Buffer | null;
      reads.set(batch[index]!, {
        type: String(flat[at]),
        head: flat[at + 1] as Buffer | null,
        length: Number(flat[at + 2]),
        digest: digest === null ? null : digest.toString('latin1'),
        pttl: Number(flat[at + 4]),
        fence: flat[at + 5] as Buffer | null,
        fenceLength: Number(flat[at + 6]),
      });
    }
    progress?.();
  }
  return reads;
}
