// Leases in Redis, the recipe of the Redis documentation plus a fencing token:
//
//   K        = holder id   (SET K holder NX PX ttl; the holder is unique per client instance)
//   K:fence  = a counter   (INCR in the same Lua script that grants, so every grant gets a
//                           token higher than every grant before it)
//
// Renew and release compare before they act (Lua, atomic on the server), so a client never
// extends or deletes a lock that has since passed to someone else.
//
// Redlock mode (several independent instances) is in redlock.ts; the Lua scripts, the
// connection and error translation, shared by both modes, are in redis-scripts.ts.
import { DEFAULT_CALL_TIMEOUT_MS, throwIfAborted, withDeadline } from './deadline';
import { LeaseLostError } from './errors';
import { redlockMethods } from './redlock';
import { connect, fenceOf, rethrow, type ScriptedRedis } from './redis-scripts';
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

export function createRedisBackend(options: RedisLeaseOptions): LeaseBackend {
  if (options.urls.length === 0) throw new Error('a redis lease client needs at least one URL');
  const timeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  const fenceSuffix = options.fenceSuffix ?? ':fence';
  const instances = options.urls.map((url) => connect(url, timeoutMs));
  const base = {
    kind: 'redis' as const,
    minTtlMs: 10,
    async close() {
      await Promise.all(instances.map((redis) => redis.quit().catch(() => redis.disconnect())));
    },
  };

  if (instances.length === 1) {
    const one: SingleInstance = { redis: instances[0]!, fenceSuffix, timeoutMs };
    // Each method hands its arguments on as they are: no closure or object per call.
    return {
      ...base,
      driftAllowanceMs: () => 0,
      tryAcquire: (key, holder, ttlMs, callOptions) => acquire(one, key, holder, ttlMs, callOptions),
      renew: (key, holder, grant, ttlMs, callOptions) => renew(one, key, holder, grant, ttlMs, callOptions),
      release: (key, holder, grant, callOptions) => release(one, key, holder, grant, callOptions),
      inspect: (key, callOptions) => inspect(one, key, callOptions),
    };
  }

  // ------------------------------------------------------------------ Redlock
  return { ...base, ...redlockMethods(instances, fenceSuffix, timeoutMs, options.driftFactor ?? 0.01) };
}

/** What the calls of single-instance mode share: the one connection and its settings. */
type SingleInstance = { redis: ScriptedRedis; fenceSuffix: string; timeoutMs: number };

// One command: the connection's socketTimeout is its deadline, and a caller's signal is raced.
// (The hot path creates no closures: this is the cost every lock pays on every call.)
const failed = {
  acquire: rethrow('acquire'),
  renew: rethrow('renew'),
  release: rethrow('release'),
  inspect: rethrow('inspect'),
};

function settle<T>(timeoutMs: number, what: string, signal: AbortSignal | undefined, sent: Promise<T>): Promise<T> {
  return signal ? withDeadline('redis', what, timeoutMs, signal, () => sent) : sent;
}

async function acquire(one: SingleInstance, key: string, holder: string, ttlMs: number, callOptions?: CallOptions): Promise<Grant | null> {
  throwIfAborted(callOptions?.signal);
  const sent = one.redis.acquire(key, fenceOf(key, one.fenceSuffix), holder, ttlMs).catch(failed.acquire);
  const token = (await settle(one.timeoutMs, 'acquire', callOptions?.signal, sent)) as number | null;
  return token === null ? null : { token: BigInt(token) };
}

async function renew(one: SingleInstance, key: string, holder: string, grant: Grant, ttlMs: number, callOptions?: CallOptions): Promise<void> {
  throwIfAborted(callOptions?.signal);
  const sent = one.redis.renew(key, fenceOf(key, one.fenceSuffix), holder, ttlMs, grant.token.toString()).catch(failed.renew);
  if ((await settle(one.timeoutMs, 'renew', callOptions?.signal, sent)) !== 1) {
    throw new LeaseLostError(key, 'expired, released or taken over (redis key or fence no longer match)');
  }
}

async function release(one: SingleInstance, key: string, holder: string, grant: Grant, callOptions?: CallOptions): Promise<boolean> {
  throwIfAborted(callOptions?.signal);
  const sent = one.redis.release(key, fenceOf(key, one.fenceSuffix), holder, grant.token.toString()).catch(failed.release);
  return (await settle(one.timeoutMs, 'release', callOptions?.signal, sent)) === 1;
}

async function inspect(one: SingleInstance, key: string, callOptions?: CallOptions): Promise<LeaseInfo | null> {
  throwIfAborted(callOptions?.signal);
  const sent = one.redis.inspect(key, fenceOf(key, one.fenceSuffix)).catch(failed.inspect);
  const [holder, pttl, fence] = (await settle(one.timeoutMs, 'inspect', callOptions?.signal, sent)) as [string | null, number, string | null];
  return holderInfo(key, holder, pttl, fence);
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
