// Leases in Redis, the recipe of the Redis documentation plus a fencing token:
//
//   K        = holder id   (SET K holder NX PX ttl; the holder is unique per client instance)
//   K:fence  = a counter   (INCR in the same Lua script that grants, so every grant gets a
//                           token higher than every grant before it)
//
// Renew and release compare before they act (Lua, atomic on the server), so a client never
// extends or deletes a lock that has since passed to someone else.
//
// Redlock mode (several independent instances): the lock is held when a majority of the
// instances granted it within its validity time (TTL minus the time acquiring took minus
// an allowance for clock drift). A Redlock lease is still only a lease: a paused or slow
// holder can outlive it. What makes it safe for correctness is the fencing token, so this
// mode produces one too. Phase 1 reads the fence counter on a majority of instances and
// takes T = max + 1; phase 2 grants with SET NX on each instance and raises that instance's
// counter to T in the same script. Any two majorities share an instance, so every earlier
// grant's token is seen in phase 1 and T is higher than all of them; and a grant that
// could have slipped in between the two phases would still hold its majority, so phase 2
// could not win unless its validity had already run out, in which case we refuse. While we
// hold the key on an instance nobody else can raise its counter there, so renew and release
// compare holder and token on every instance, as in single-instance mode.
import Redis from 'ioredis';
import { DEFAULT_CALL_TIMEOUT_MS, monotonicNow, throwIfAborted, withDeadline } from './deadline';
import { BackendUnavailableError, LeaseLostError } from './errors';
import type { CallOptions, Grant, LeaseBackend, LeaseInfo } from './types';

export type RedisLeaseOptions = {
  /** One URL: a single instance. Several: Redlock over independent instances (not replicas). */
  urls: string[];
  /** Appended to a lock key to name its fence counter (default ":fence"). */
  fenceSuffix?: string;
  callTimeoutMs?: number;
  /** Redlock: allowance for clock drift, as a fraction of the TTL (default 0.01, plus 2 ms). */
  driftFactor?: number;
};

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
type ScriptedRedis = Redis & Record<ScriptName, (...args: (string | number)[]) => Promise<unknown>>;

function connect(url: string, timeoutMs: number): ScriptedRedis {
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

function rethrow(what: string) {
  return (error: unknown): never => {
    throw translate(error, what);
  };
}

function translate(error: unknown, what: string): unknown {
  const message = (error as Error)?.message ?? String(error);
  if (UNAVAILABLE.test(message) || (error as { name?: string })?.name === 'MaxRetriesPerRequestError') {
    return new BackendUnavailableError('redis', `${what}: ${message}`, { cause: error });
  }
  return error;
}

export function createRedisBackend(options: RedisLeaseOptions): LeaseBackend {
  if (options.urls.length === 0) throw new Error('a redis lease client needs at least one URL');
  const timeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  const fenceSuffix = options.fenceSuffix ?? ':fence';
  const instances = options.urls.map((url) => connect(url, timeoutMs));
  const fenceOf = (key: string) => `${key}${fenceSuffix}`;
  // One command: the connection's socketTimeout is its deadline, and a caller's signal is raced.
  // (The hot path creates no closures: this is the cost every lock pays on every call.)
  const failed = {
    acquire: rethrow('acquire'),
    renew: rethrow('renew'),
    release: rethrow('release'),
    inspect: rethrow('inspect'),
  };
  const settle = <T>(what: string, signal: AbortSignal | undefined, sent: Promise<T>): Promise<T> =>
    signal ? withDeadline('redis', what, timeoutMs, signal, () => sent) : sent;
  // Several rounds over several instances (Redlock): one deadline for the whole operation.
  const quorumCall = <T>(what: string, callOptions: CallOptions | undefined, work: () => Promise<T>) =>
    withDeadline('redis', what, timeoutMs, callOptions?.signal, () =>
      work().catch((error: unknown) => {
        throw translate(error, what);
      }),
    );
  const base = {
    kind: 'redis' as const,
    minTtlMs: 10,
    async close() {
      await Promise.all(instances.map((redis) => redis.quit().catch(() => redis.disconnect())));
    },
  };

  if (instances.length === 1) {
    const redis = instances[0]!;
    return {
      ...base,
      driftAllowanceMs: () => 0,
      async tryAcquire(key, holder, ttlMs, callOptions) {
        throwIfAborted(callOptions?.signal);
        const sent = redis.acquire(key, fenceOf(key), holder, ttlMs).catch(failed.acquire);
        const token = (await settle('acquire', callOptions?.signal, sent)) as number | null;
        return token === null ? null : { token: BigInt(token) };
      },
      async renew(key, holder, grant, ttlMs, callOptions) {
        throwIfAborted(callOptions?.signal);
        const sent = redis.renew(key, fenceOf(key), holder, ttlMs, grant.token.toString()).catch(failed.renew);
        if ((await settle('renew', callOptions?.signal, sent)) !== 1) {
          throw new LeaseLostError(key, 'expired, released or taken over (redis key or fence no longer match)');
        }
      },
      async release(key, holder, grant, callOptions) {
        throwIfAborted(callOptions?.signal);
        const sent = redis.release(key, fenceOf(key), holder, grant.token.toString()).catch(failed.release);
        return (await settle('release', callOptions?.signal, sent)) === 1;
      },
      async inspect(key, callOptions) {
        throwIfAborted(callOptions?.signal);
        const sent = redis.inspect(key, fenceOf(key)).catch(failed.inspect);
        const [holder, pttl, fence] = (await settle('inspect', callOptions?.signal, sent)) as [string | null, number, string | null];
        return holderInfo(key, holder, pttl, fence);
      },
    };
  }

  // ------------------------------------------------------------------ Redlock
  const quorum = Math.floor(instances.length / 2) + 1;
  const driftFactor = options.driftFactor ?? 0.01;
  const drift = (ttlMs: number) => ttlMs * driftFactor + 2;
  const everywhere = <T>(work: (redis: ScriptedRedis) => Promise<T>) => Promise.allSettled(instances.map((redis) => work(redis)));
  const unavailable = (what: string, failures: PromiseRejectedResult[]) =>
    new BackendUnavailableError(
      'redis',
      `${what}: only ${instances.length - failures.length} of ${instances.length} instances answered, ${quorum} needed (${String((translate(failures[0]?.reason, what) as Error)?.message ?? '')})`,
    );

  return {
    ...base,
    driftAllowanceMs: drift,
    async tryAcquire(key, holder, ttlMs, callOptions): Promise<Grant | null> {
      return quorumCall('acquire', callOptions, async () => {
        const started = monotonicNow();
        // 1. The highest token any earlier grant could have: read a majority of the fences.
        const reads = await everywhere((redis) => redis.get(fenceOf(key)));
        const answered = reads.filter((r): r is PromiseFulfilledResult<string | null> => r.status === 'fulfilled');
        if (answered.length < quorum) throw unavailable('acquire', reads.filter((r) => r.status === 'rejected'));
        let highest = 0n;
        for (const { value } of answered) {
          if (value !== null && !/^\d+$/.test(value)) throw new Error(`fence counter ${fenceOf(key)} does not hold a counter`);
          if (value !== null && BigInt(value) > highest) highest = BigInt(value);
        }
        let token = highest + 1n;
        // 2. Grant on every instance at that token.
        const grants = await everywhere((redis) => redis.acquireAt(key, fenceOf(key), holder, ttlMs, token.toString()) as Promise<string | null>);
        const fences = grants.flatMap((g) => (g.status === 'fulfilled' && g.value !== null ? [BigInt(g.value)] : []));
        const granted = fences.length;
        if (granted >= quorum) {
          // 3. An instance outside our read majority may hold a higher fence, left by an
          //    attempt that failed; then the token is that, on all of our instances, so
          //    renew and release can compare it everywhere.
          const final = fences.reduce((a, b) => (a > b ? a : b));
          if (final > token) {
            token = final;
            await everywhere((redis) => redis.raiseFence(key, fenceOf(key), holder, token.toString()));
          }
        }
        const validityMs = ttlMs - (monotonicNow() - started) - drift(ttlMs);
        if (granted >= quorum && validityMs > 0) return { token };
        // 3. Not enough, or too late: undo what we got, so nobody waits a TTL for nothing.
        await everywhere((redis) => redis.releaseHolder(key, fenceOf(key), holder));
        const failures = grants.filter((g): g is PromiseRejectedResult => g.status === 'rejected');
        if (instances.length - failures.length < quorum) throw unavailable('acquire', failures);
        return null;
      });
    },
    async renew(key, holder, grant, ttlMs, callOptions) {
      await quorumCall('renew', callOptions, async () => {
        const results = await everywhere((redis) => redis.renew(key, fenceOf(key), holder, ttlMs, grant.token.toString()));
        const renewed = results.filter((r) => r.status === 'fulfilled' && r.value === 1).length;
        if (renewed >= quorum) return;
        const failures = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
        // Unknown is not lost: only a majority of explicit "not yours" answers loses the lease.
        if (instances.length - failures.length - renewed >= quorum) {
          throw new LeaseLostError(key, `held on only ${renewed} of ${instances.length} instances, ${quorum} needed`);
        }
        throw unavailable('renew', failures);
      });
    },
    async release(key, holder, grant, callOptions) {
      return quorumCall('release', callOptions, async () => {
        const results = await everywhere((redis) => redis.release(key, fenceOf(key), holder, grant.token.toString()));
        return results.filter((r) => r.status === 'fulfilled' && r.value === 1).length >= quorum;
      });
    },
    async inspect(key, callOptions): Promise<LeaseInfo | null> {
      return quorumCall('inspect', callOptions, async () => {
        const reads = await everywhere((redis) => redis.inspect(key, fenceOf(key)) as Promise<[string | null, number, string | null]>);
        const answered = reads.filter((r): r is PromiseFulfilledResult<[string | null, number, string | null]> => r.status === 'fulfilled');
        if (answered.length < quorum) throw unavailable('inspect', reads.filter((r) => r.status === 'rejected'));
        const byHolder = new Map<string, [string | null, number, string | null][]>();
        for (const { value } of answered) if (value[0] !== null) byHolder.set(value[0], [...(byHolder.get(value[0]) ?? []), value]);
        for (const [holder, views] of byHolder) {
          if (views.length < quorum) continue;
          const remaining = Math.min(...views.map((v) => v[1]));
          const fences = views.map((v) => v[2]).filter((f): f is string => f !== null && /^\d+$/.test(f)).map(BigInt);
          const token = fences.length ? fences.reduce((a, b) => (a > b ? a : b)) : null;
          return { key, holder, token, remainingMs: remaining >= 0 ? remaining : null };
        }
        return null;
      });
    },
  };
}

function holderInfo(key: string, holder: string | null, pttl: number, fence: string | null): LeaseInfo | null {
  if (holder === null || pttl === -2) return null;
  return {
    key,
    holder,
    token: fence !== null && /^\d+$/.test(fence) ? BigInt(fence) : null,
    // -1: the key has no expiry (someone set it without PX): held, but with no TTL.
    remainingMs: pttl >= 0 ? pttl : null,
  };
}
