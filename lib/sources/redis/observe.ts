// From what the instances say to Observations: every instance is read (keys scanned or
// named), the read fails unless a quorum answered, and each key becomes one observation
// (a single instance's lock here, a Redlock quorum's in quorum.ts).
import type Redis from 'ioredis';
import { displayText } from '../../domain/display';
import { unreadableObservation, type Observation } from '../../domain/observe';
import { SourceUnavailableError } from '../errors';
import type { Progress } from '../types';
import { problemOf, withinDeadline, type RedisSourceState } from './instances';
import { ABSENT, fenceProblem, holderOf, isCounter, keyOf, readInstance, tokenOf, type KeyRead, type RawKey } from './keys';
import { judgeQuorum } from './quorum';
import { breathe, ITEMS_PER_BREATH } from '../../time/clock';

/** One key's observation from what each instance said about it (one entry per answering instance). */
export function observe(state: RedisSourceState, raw: RawKey, views: (KeyRead | undefined)[], allKeys: Set<RawKey>): Observation | null {
  const suffix = state.config.fenceSuffix;
  const present = views.filter((v): v is KeyRead => v !== undefined && v.type !== 'none');
  // The lock is gone; its fence counter, still there, says how many grants there have been.
  if (present.length === 0) return state.redlock ? null : goneLock(raw, views[0] && tokenOf(views[0]));
  // A fence is not a lease of its own: a counter named like one, or anything beside its lock
  // key. (A full read reads the lock key of a fence found alone too, with its fence, at once.)
  if (raw.endsWith(suffix) && (allKeys.has(raw.slice(0, -suffix.length)) || present.every((v) => v.type === 'string' && isCounter(v.head, v.length)))) {
    return null;
  }
  const key = keyOf(raw);
  const wrongType = present.find((v) => v.type !== 'string');
  if (wrongType) {
    return unreadableObservation(key, `the key holds a ${displayText(wrongType.type, 20)}, not a string: it is not a lock this source can read`);
  }
  if (!state.redlock) {
    const [view] = present;
    const fenceGarbage = fenceProblem(view!);
    const token = tokenOf(view!);
    return {
      key,
      kind: 'lock',
      holder: holderOf(view!),
      token,
      // Leasehold's layout raises the fence at each grant and only then (lib/lease/redis.ts).
      ...(token !== null ? { issued: token } : {}),
      ttlMs: null,
      // -1: set without an expiry: held until someone deletes it.
      remainingMs: view!.pttl >= 0 ? view!.pttl : null,
      candidates: [],
      ...(fenceGarbage ? { detail: { fence: fenceGarbage } } : {}),
    };
  }
  return judgeQuorum(state, key, views, present);
}

/** A lock key that is not there, with its fence counter's value (nothing when it has none). */
function goneLock(raw: RawKey, issued: bigint | null | undefined): Observation | null {
  if (issued === null || issued === undefined) return null;
  return { key: keyOf(raw), kind: 'lock', holder: null, token: null, ttlMs: null, remainingMs: null, candidates: [], issued, gone: true };
}

/** The keys `keysFor` names on every instance, read; fails unless a quorum of instances answered. */
export async function read(
  state: RedisSourceState,
  kind: 'full' | 'keys',
  keysFor: (redis: Redis, signal: AbortSignal) => Promise<Set<RawKey>>,
  signal: AbortSignal,
  progress?: Progress,
): Promise<Observation[]> {
  const { config, instances, quorum, redlock } = state;
  const suffix = config.fenceSuffix;
  const results = await Promise.allSettled(
    instances.map((instance) =>
      // Each instance within its answer deadline: a frozen one of a quorum is not waited for.
      withinDeadline(state, instance, kind, async () => {
        const keys = await keysFor(instance.redis, signal);
        // A fence beside its lock key is read with the lock: no need to read it as a key too.
        // A fence found alone: its lock key is read as well, lock and fence in one script, so
        // what the counter says is never older than what the lock key says (a lock taken
        // while the keys were listed is seen held, not counted as a grant gone unseen).
        const named: RawKey[] = [];
        for (const raw of keys) {
          if (!raw.endsWith(suffix)) named.push(raw);
          else if (!keys.has(raw.slice(0, -suffix.length))) named.push(raw, ...(redlock ? [] : [raw.slice(0, -suffix.length)]));
        }
        return readInstance(instance.redis, named, suffix, progress);
      }),
    ),
  );
  results.forEach((result, index) => {
    instances[index]!.lastError = result.status === 'rejected' ? problemOf(instances[index]!, result.reason) : null;
  });
  const answered = results.filter((r) => r.status === 'fulfilled').length;
  if (answered < quorum) {
    const firstError = instances.find((i) => i.lastError)?.lastError ?? 'no answer';
    throw new SourceUnavailableError(
      config.name,
      redlock ? `only ${answered} of ${instances.length} instances answered (${quorum} needed): ${firstError}` : firstError,
    );
  }
  const perInstance = results.map((r) => (r.status === 'fulfilled' ? r.value : null));
  // Every key read, and those that are there (a fence beside one of them is not a lease).
  const readKeys = new Set<RawKey>();
  const allKeys = new Set<RawKey>();
  for (const reads of perInstance) {
    for (const [key, view] of reads ?? []) {
      readKeys.add(key);
      if (view.type !== 'none') allKeys.add(key);
    }
  }
  const observations: Observation[] = [];
  let done = 0;
  for (const raw of readKeys) {
    if (++done % ITEMS_PER_BREATH === 0) await breathe();
    const observation = observe(
      state,
      raw,
      perInstance.map((reads) => (reads ? (reads.get(raw) ?? ABSENT) : undefined)),
      allKeys,
    );
    if (observation) observations.push(observation);
  }
  return observations;
}
