// The Redis lease layout's server side: the Lua scripts every connection defines as
// commands, the connection itself, and how a failed command is reported. Shared by the
// single-instance client (redis.ts) and Redlock (redlock.ts); the layout is described in redis.ts.
import Redis from 'ioredis';
import { BackendUnavailableError } from './errors';

// A fence must hold a counter (or nothing yet); digit strings compare exactly beyond 2^53,
// where Lua's numbers (doubles) would not.
const IS_COUNT = `local function is_count(v) return v == false or string.match(v, '^%d+$') ~= nil end`;
const LESS = `local function less(a, b) if #a ~= #b then return #a < #b end return a < b end`;

const SCRIPTS = {
  // KEYS: lock, fence   ARGV: holder, ttl ms  ->  token, or nil when held
  // (A fence that holds something other than a counter makes INCR fail; the grant is then
  // undone, so no lock is left without a token. Checking first would cost every grant.)
  acquire: `
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return false end
local token = redis.pcall('INCR', KEYS[2])
if type(token) == 'table' and token.err then
  redis.call('DEL', KEYS[1])
  return redis.error_reply('fence counter ' .. KEYS[2] .. ' does not hold a counter')
end
return token`,
  // KEYS: lock, fence   ARGV: holder, ttl ms, token  ->  1 renewed, 0 not ours
  renew: `
if redis.call('GET', KEYS[1]) == ARGV[1] and redis.call('GET', KEYS[2]) == ARGV[3] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0`,
  // KEYS: lock, fence   ARGV: holder, token  ->  1 released, 0 not ours
  release: `
if redis.call('GET', KEYS[1]) == ARGV[1] and redis.call('GET', KEYS[2]) == ARGV[2] then
  return redis.call('DEL', KEYS[1])
end
return 0`,
  // KEYS: lock, fence  ->  { holder or nil, pttl, fence or nil }
  inspect: `return { redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1]), redis.call('GET', KEYS[2]) }`,
  // Redlock phase 2. KEYS: lock, fence   ARGV: holder, ttl ms, token T
  //   ->  the instance's fence after raising it to T (granted), or nil (held by someone else)
  acquireAt: `${IS_COUNT}
${LESS}
local fence = redis.call('GET', KEYS[2])
if not is_count(fence) then return redis.error_reply('fence counter ' .. KEYS[2] .. ' does not hold a counter') end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  if fence == false or less(fence, ARGV[3]) then redis.call('SET', KEYS[2], ARGV[3]); return ARGV[3] end
  return fence
end
return false`,
  // Redlock phase 3, only when an instance's fence was already above T (left by an attempt
  // that failed): raise our instances to the final token. KEYS: lock, fence  ARGV: holder, token
  raiseFence: `${LESS}
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local fence = redis.call('GET', KEYS[2])
if fence == false or less(fence, ARGV[2]) then redis.call('SET', KEYS[2], ARGV[2]) end
return 1`,
  // Redlock release of a failed attempt: the holder only (no token was agreed).
  releaseHolder: `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`,
} as const;

type ScriptName = keyof typeof SCRIPTS;
export type ScriptedRedis = Redis & Record<ScriptName, (...args: (string | number)[]) => Promise<unknown>>;

export function connect(url: string, timeoutMs: number): ScriptedRedis {
  const redis = new Redis(url, {
    connectTimeout: timeoutMs,
    // The deadline of every command: when no reply arrives for this long while commands are
    // waiting, the socket is dropped and they fail. (One timer per burst of commands rather
    // than one per command, as commandTimeout would: it shows in the benchmark.)
    socketTimeout: timeoutMs,
    // Fail a command at once when the connection is down instead of queueing it for a
    // reconnect that may never come; reconnecting goes on in the background.
    maxRetriesPerRequest: 0,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    lazyConnect: false,
  }) as ScriptedRedis;
  // Connection errors surface as failed commands; without a listener they would crash the process.
  redis.on('error', () => {});
  for (const [name, lua] of Object.entries(SCRIPTS)) redis.defineCommand(name, { numberOfKeys: 2, lua });
  return redis;
}

const UNAVAILABLE = /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND|timed out|Socket timeout|Connection is closed|MaxRetriesPerRequest|Stream isn't writeable|LOADING|max number of clients/i;

export function rethrow(what: string) {
  return (error: unknown): never => {
    throw translate(error, what);
  };
}

export function translate(error: unknown, what: string): unknown {
  const message = (error as Error)?.message ?? String(error);
  if (UNAVAILABLE.test(message) || (error as { name?: string })?.name === 'MaxRetriesPerRequestError') {
    return new BackendUnavailableError('redis', `${what}: ${message}`, { cause: error });
  }
  return error;
}

/** The fence counter of a lock key: the key with the fence suffix appended. */
export function fenceOf(key: string, fenceSuffix: string): string {
  return `${key}${fenceSuffix}`;
}
