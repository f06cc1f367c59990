// Guarded actions on a Redis source (the contract: ../force.ts): one Lua script, atomic on
// the server, compares the lock's value with the holder the person saw and its fence counter
// (K + fenceSuffix) with the token, then frees the lock:
//
//   fenced (Leasehold's layout: the fence counter exists)
//     INCR the fence, then DEL K (or SET K leasehold:quarantine PX <quarantine>)
//   unfenced (node-redlock, plain SET NX PX: no fence counter)
//     force-release only: DEL K (or SET K leasehold:quarantine PX <quarantine>)
//
// lib/lease grants with SET NX and INCR of the same counter, so every later grant is above
// the raised token, and the old holder's renew and release (which compare value and fence)
// fail. A quarantine holds K under the reserved holder until it expires: SET NX fails
// meanwhile. When the state is not the expected one the script changes nothing and returns
// what it found (the value bounded as the adapter reads it: head, length and SHA-1).
//
// A Redlock quorum source (several instances) is refused: no compare-and-set spans
// independent instances, and forcing some of them but not a majority (a holder renewing on
// one while we delete on another) would leave a state nobody saw and nobody can undo.
import type { RedisSourceConfig } from './config';
import { unfencedAlternatives } from '../../domain/admin-actions';
import { EXACT_TEXT_HEAD_BYTES, EXACT_TEXT_MAX_BYTES } from '../../domain/display';
import { SourceUnavailableError } from '../errors';
import { exactOf } from '../exact';
import { bytesOfExact, ForceConflictError, ForceNotPossibleError, QUARANTINE_HOLDER, type CheckedRequest, type ForceDone, type ForcePlan } from '../force';
import { closeInstances, connectInstances, problemOf, type RedisInstance } from './instances';
import { holderOf, isCounter, type ReaderRedis } from './keys';

// KEYS: lock, fence.  ARGV: holder, token ('' for an unfenced lock: then no fence may exist),
// quarantine ms ('' for none), quarantine holder, head bytes, whole bytes.
// -> {1, old token or false, new token or false} | {0, value or its head, length, SHA-1 of a
//    long value, fence head, fence length} | {-1, type of a key that is not a string}
export const FORCE_SCRIPT = `
local t = redis.call('TYPE', KEYS[1])['ok']
if t ~= 'string' and t ~= 'none' then return {-1, t} end
local ft = redis.call('TYPE', KEYS[2])['ok']
local len = 0
local held = false
if t == 'string' then
  len = redis.call('STRLEN', KEYS[1])
  held = len == #ARGV[1] and redis.call('GET', KEYS[1]) == ARGV[1]
end
local fence = false
local flen = 0
if ft == 'string' then
  flen = redis.call('STRLEN', KEYS[2])
  fence = redis.call('GETRANGE', KEYS[2], 0, 40)
end
local fenced
if ARGV[2] == '' then fenced = ft == 'none' else fenced = flen == #ARGV[2] and fence == ARGV[2] end
if held and fenced then
  local new = false
  if ARGV[2] ~= '' then
    redis.call('INCR', KEYS[2])
    new = redis.call('GET', KEYS[2])
  end
  if ARGV[3] ~= '' then redis.call('SET', KEYS[1], ARGV[4], 'PX', ARGV[3]) else redis.call('DEL', KEYS[1]) end
  return {1, ARGV[2] ~= '' and ARGV[2] or false, new}
end
local head = false
local digest = false
if t == 'string' then
  if len <= tonumber(ARGV[6]) then head = redis.call('GET', KEYS[1])
  else
    head = redis.call('GETRANGE', KEYS[1], 0, tonumber(ARGV[5]) - 1)
    digest = redis.sha1hex(redis.call('GET', KEYS[1]))
  end
end
return {0, head, len, digest, fence, flen}`;

type ForceRedis = ReaderRedis & { leaseholdForceBuffer(...args: (string | Buffer | number)[]): Promise<unknown[]> };

// Redis's glob (KEYS, SCAN MATCH): * ? [set] [^set] [a-z] and \ escapes, over the key's bytes.
function globPattern(pattern: string): RegExp {
  const source = Buffer.from(pattern).toString('latin1');
  const literal = (c: string) => c.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
  let out = '';
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === '*') out += '[\\s\\S]*';
    else if (c === '?') out += '[\\s\\S]';
    else if (c === '\\' && i + 1 < source.length) out += literal(source[++i]!);
    else if (c === '[' && source.indexOf(']', i + 1) > i + 1) {
      const end = source.indexOf(']', i + 1);
      let set = source.slice(i + 1, end);
      const negated = set.startsWith('^');
      if (negated) set = set.slice(1);
      out += `[${negated ? '^' : ''}${set.replace(/[\]\\^]/g, '\\$&')}]`;
      i = end;
    } else out += literal(c);
  }
  return new RegExp(`^${out}$`);
}

/** The lock key's bytes, when it is one the source reads (its `match` patterns); ForceNotPossibleError else. */
function lockKeyOf(config: RedisSourceConfig, patterns: RegExp[], key: string): Buffer {
  const raw = bytesOfExact(key, 'key');
  if (!patterns.some((pattern) => pattern.test(raw.toString('latin1')))) {
    throw new ForceNotPossibleError('not_found', `source ${config.name} reads only keys matching ${config.match.join(', ')}: this key is not one of its leases`);
  }
  return raw;
}

/** The script's arguments, as sent; and as text for a plan. */
function argumentsOf(config: RedisSourceConfig, key: Buffer, request: CheckedRequest) {
  const fence = Buffer.concat([key, Buffer.from(config.fenceSuffix)]);
  const holder = bytesOfExact(request.expectedHolder, 'holder');
  const tail = [request.expectedToken ?? '', request.quarantineMs === undefined ? '' : String(request.quarantineMs), QUARANTINE_HOLDER, String(EXACT_TEXT_HEAD_BYTES), String(EXACT_TEXT_MAX_BYTES)];
  return { sent: [key, fence, holder, ...tail], shown: [exactOf(key), exactOf(fence), request.expectedHolder, ...tail] };
}

function conflict(request: CheckedRequest, reply: unknown[]): never {
  const [, head, length, digest, fence, fenceLength] = reply as [number, Buffer | null, number, Buffer | null, Buffer | null, number];
  const holder = head === null ? null : holderOf({ type: 'string', head, length: Number(length), digest: digest?.toString('latin1') ?? null, pttl: 0, fence: null, fenceLength: 0 });
  const token = fence !== null && isCounter(fence, Number(fenceLength)) ? BigInt(fence.toString('latin1')).toString() : null;
  throw new ForceConflictError(request.key, head === null && fence === null ? null : { holder, token });
}

/** Refuses every action on a Redlock quorum source, without connecting to it (see the head of this file). */
function quorumRefusal(config: RedisSourceConfig) {
  const refuse = async (): Promise<never> => {
    throw new ForceNotPossibleError(
      'not_supported',
      `source ${config.name} is a Redlock quorum of ${config.urls.length} instances: no compare-and-set spans independent instances, and a force applied on some but not a majority would leave a state nobody saw; act on each instance with its own tools`,
    );
  };
  return { plan: refuse, execute: refuse, close: async () => {} };
}

export function createRedisForce(config: RedisSourceConfig) {
  if (config.urls.length > 1) return quorumRefusal(config);
  const patterns = config.match.map(globPattern);
  const state = connectInstances(config);
  const [instance] = state.instances as [RedisInstance];
  const redis = instance.redis as ForceRedis;
  redis.defineCommand('leaseholdForce', { numberOfKeys: 2, lua: FORCE_SCRIPT });
  const failed = (error: unknown): never => {
    if (error instanceof ForceConflictError || error instanceof ForceNotPossibleError) throw error;
    throw new SourceUnavailableError(config.name, problemOf(instance, error), { cause: error });
  };

  return {
    async plan(request: CheckedRequest): Promise<ForcePlan> {
      const key = lockKeyOf(config, patterns, request.key);
      const { sent, shown } = argumentsOf(config, key, request);
      // The layout: a lock is fenced when its fence counter exists.
      const fenceType = await redis.type(sent[1] as Buffer).catch(failed);
      if (request.row.fencedOnly && fenceType === 'none') {
        throw new ForceNotPossibleError('unfenced', `${shown[0]} has no fence counter (${shown[1]}): it cannot be ${request.row.done}, only ${unfencedAlternatives()}`);
      }
      const fenced = fenceType !== 'none';
      const frees = request.quarantineMs === undefined ? 'DEL the lock' : `SET the lock to ${QUARANTINE_HOLDER} for ${request.quarantineMs} ms`;
      const what = request.expectedToken === null ? `compare the lock's value, check that no fence counter exists, and ${frees}` : `compare the lock's value and its fence counter, INCR the fence and ${frees}`;
      return { layout: fenced ? 'redis lock with a fence counter' : 'redis lock without a fence counter', fenced, steps: [{ what: `${what}, in one Lua script`, statement: FORCE_SCRIPT.trim(), args: shown }], detail: { fenceCounter: shown[1] } };
    },

    async execute(request: CheckedRequest): Promise<ForceDone> {
      const key = lockKeyOf(config, patterns, request.key);
      const reply = await redis.leaseholdForceBuffer(...argumentsOf(config, key, request).sent).catch(failed);
      if (reply[0] === -1) throw new ForceNotPossibleError('not_supported', `the key holds a ${String(reply[1])}, not a lock`);
      if (reply[0] !== 1) conflict(request, reply);
      const [, previous, next] = reply as [number, Buffer | null, Buffer | null];
      return {
        previousToken: previous?.toString('latin1') ?? null,
        newToken: next?.toString('latin1') ?? null,
        detail: request.quarantineMs === undefined ? { deleted: true } : { quarantinedForMs: request.quarantineMs, quarantineHolder: QUARANTINE_HOLDER },
      };
    },

    close: () => closeInstances(state),
  };
}
