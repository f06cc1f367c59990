// Redlock mode of the Redis lease client (several independent instances; see redis.ts for
// the layout on each instance and redis-scripts.ts for its scripts).
//
// The lock is held when a majority of the instances granted it within its validity time
// (TTL minus the time acquiring took minus an allowance for clock drift). A Redlock lease
// is still only a lease: a paused or slow holder can outlive it. What makes it safe for
// correctness is the fencing token, so this mode produces one too. Phase 1 reads the fence
// counter on a majority of instances and takes T = max + 1; phase 2 grants with SET NX on
// each instance and raises that instance's counter to T in the same script. Any two
// majorities share an instance, so every earlier grant's token is seen in phase 1 and T is
// higher than all of them; and a grant that could have slipped in between the two phases
// would still hold its majority, so phase 2 could not win unless its validity had already
// run out, in which case we refuse. While we hold the key on an instance nobody else can
// raise its counter there, so renew and release compare holder and token on every
// instance, as in single-instance mode.
import { monotonicNow, withDeadline } from './deadline';
import { BackendUnavailableError, LeaseLostError } from './errors';
import { fenceOf, translate, type ScriptedRedis } from './redis-scripts';
import type { CallOptions, Grant, LeaseBackend, LeaseInfo } from './types';

/** What every Redlock call shares: the instances and the settings. */
type Redlock = { instances: ScriptedRedis[]; quorum: number; driftFactor: number; fenceSuffix: string; timeoutMs: number };

/** The calls of a LeaseBackend in Redlock mode over `instances` (createRedisBackend adds kind, minTtlMs and close). */
export function redlockMethods(
  instances: ScriptedRedis[],
  fenceSuffix: string,
  timeoutMs: number,
  driftFactor: number,
): Pick<LeaseBackend, 'driftAllowanceMs' | 'tryAcquire' | 'renew' | 'release' | 'inspect'> {
  const quorum = Math.floor(instances.length / 2) + 1;
  const rl: Redlock = { instances, quorum, driftFactor, fenceSuffix, timeoutMs };
  return {
    driftAllowanceMs: (ttlMs) => drift(rl, ttlMs),
    tryAcquire: (key, holder, ttlMs, callOptions) => acquire(rl, key, holder, ttlMs, callOptions),
    renew: (key, holder, grant, ttlMs, callOptions) => renew(rl, key, holder, grant, ttlMs, callOptions),
    release: (key, holder, grant, callOptions) => release(rl, key, holder, grant, callOptions),
    inspect: (key, callOptions) => inspect(rl, key, callOptions),
  };
}

function drift(rl: Redlock, ttlMs: number): number {
  return ttlMs * rl.driftFactor + 2;
}

function everywhere<T>(rl: Redlock, work: (redis: ScriptedRedis) => Promise<T>) {
  return Promise.allSettled(rl.instances.map((redis) => work(redis)));
}

function unavailable(rl: Redlock, what: string, failures: PromiseRejectedResult[]) {
  return new BackendUnavailableError(
    'redis',
    `${what}: only ${rl.instances.length - failures.length} of ${rl.instances.length} instances answered, ${rl.quorum} needed (${String((translate(failures[0]?.reason, what) as Error)?.message ?? '')})`,
  );
}

// Several rounds over several instances (Redlock): one deadline for the whole operation.
function quorumCall<T>(rl: Redlock, what: string, callOptions: CallOptions | undefined, work: () => Promise<T>) {
  return withDeadline('redis', what, rl.timeoutMs, callOptions?.signal, () =>
    work().catch((error: unknown) => {
      throw translate(error, what);
    }),
  );
}

async function acquire(rl: Redlock, key: string, holder: string, ttlMs: number, callOptions?: CallOptions): Promise<Grant | null> {
  return quorumCall(rl, 'acquire', callOptions, async () => {
    const started = monotonicNow();
    // 1. The highest token any earlier grant could have: read a majority of the fences.
    const reads = await everywhere(rl, (redis) => redis.get(fenceOf(key, rl.fenceSuffix)));
    const answered = reads.filter((r): r is PromiseFulfilledResult<string | null> => r.status === 'fulfilled');
    if (answered.length < rl.quorum) throw unavailable(rl, 'acquire', reads.filter((r) => r.status === 'rejected'));
    let highest = 0n;
    for (const { value } of answered) {
      if (value !== null && !/^\d+$/.test(value)) throw new Error(`fence counter ${fenceOf(key, rl.fenceSuffix)} does not hold a counter`);
      if (value !== null && BigInt(value) > highest) highest = BigInt(value);
    }
    let token = highest + 1n;
    // 2. Grant on every instance at that token.
    const grants = await everywhere(rl, (redis) => redis.acquireAt(key, fenceOf(key, rl.fenceSuffix), holder, ttlMs, token.toString()) as Promise<string | null>);
    const fences = grants.flatMap((g) => (g.status === 'fulfilled' && g.value !== null ? [BigInt(g.value)] : []));
    const granted = fences.length;
    if (granted >= rl.quorum) {
      // 3. An instance outside our read majority may hold a higher fence, left by an
      //    attempt that failed; then the token is that, on all of our instances, so
      //    renew and release can compare it everywhere.
      const final = fences.reduce((a, b) => (a > b ? a : b));
      if (final > token) {
        token = final;
        await everywhere(rl, (redis) => redis.raiseFence(key, fenceOf(key, rl.fenceSuffix), holder, token.toString()));
      }
    }
    const validityMs = ttlMs - (monotonicNow() - started) - drift(rl, ttlMs);
    if (granted >= rl.quorum && validityMs > 0) return { token };
    // 3. Not enough, or too late: undo what we got, so nobody waits a TTL for nothing.
    await everywhere(rl, (redis) => redis.releaseHolder(key, fenceOf(key, rl.fenceSuffix), holder));
    const failures = grants.filter((g): g is PromiseRejectedResult => g.status === 'rejected');
    if (rl.instances.length - failures.length < rl.quorum) throw unavailable(rl, 'acquire', failures);
    return null;
  });
}

async function renew(rl: Redlock, key: string, holder: string, grant: Grant, ttlMs: number, callOptions?: CallOptions): Promise<void> {
  await quorumCall(rl, 'renew', callOptions, async () => {
    const results = await everywhere(rl, (redis) => redis.renew(key, fenceOf(key, rl.fenceSuffix), holder, ttlMs, grant.token.toString()));
    const renewed = results.filter((r) => r.status === 'fulfilled' && r.value === 1).length;
    if (renewed >= rl.quorum) return;
    const failures = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    // Unknown is not lost: only a majority of explicit "not yours" answers loses the lease.
    if (rl.instances.length - failures.length - renewed >= rl.quorum) {
      throw new LeaseLostError(key, `held on only ${renewed} of ${rl.instances.length} instances, ${rl.quorum} needed`);
    }
    throw unavailable(rl, 'renew', failures);
  });
}

async function release(rl: Redlock, key: string, holder: string, grant: Grant, callOptions?: CallOptions): Promise<boolean> {
  return quorumCall(rl, 'release', callOptions, async () => {
    const results = await everywhere(rl, (redis) => redis.release(key, fenceOf(key, rl.fenceSuffix), holder, grant.token.toString()));
    return results.filter((r) => r.status === 'fulfilled' && r.value === 1).length >= rl.quorum;
  });
}

async function inspect(rl: Redlock, key: string, callOptions?: CallOptions): Promise<LeaseInfo | null> {
  return quorumCall(rl, 'inspect', callOptions, async () => {
    const reads = await everywhere(rl, (redis) => redis.inspect(key, fenceOf(key, rl.fenceSuffix)) as Promise<[string | null, number, string | null]>);
    const answered = reads.filter((r): r is PromiseFulfilledResult<[string | null, number, string | null]> => r.status === 'fulfilled');
    if (answered.length < rl.quorum) throw unavailable(rl, 'inspect', reads.filter((r) => r.status === 'rejected'));
    const byHolder = new Map<string, [string | null, number, string | null][]>();
    for (const { value } of answered) if (value[0] !== null) byHolder.set(value[0], [...(byHolder.get(value[0]) ?? []), value]);
    for (const [holder, views] of byHolder) {
      if (views.length < rl.quorum) continue;
      const remaining = Math.min(...views.map((v) => v[1]));
      const fences = views.map((v) => v[2]).filter((f): f is string => f !== null && /^\d+$/.test(f)).map(BigInt);
      const token = fences.length ? fences.reduce((a, b) => (a > b ? a : b)) : null;
      return { key, holder, token, remainingMs: remaining >= 0 ? remaining : null };
    }
    return null;
  });
}
