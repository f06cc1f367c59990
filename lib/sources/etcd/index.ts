// etcd source: elections, mutexes and single keys with a lease, under configured prefixes,
// plus the cluster's own status (leader member, Raft term and index, members). This file holds
// the source itself (a full read, a poll, a targeted read); the parts are client.ts, read.ts,
// ttl.ts, ttl-proof.ts and expiry-proof.ts (expiries proven as they happen), observe.ts (the key
// layouts), watch.ts and cluster.ts, sharing state.ts.
import type { EtcdSourceConfig } from './config';
import type { BackendContext } from '../backend';
import { exactOf } from '../exact';
import { SourceUnavailableError } from '../errors';
import { reconcileDue, type ChangeHint, type Progress, type LeaseSource, type PollResult, type SourceSnapshot } from '../types';
import { etcdProblem } from './client';
import { proveExpiries } from './expiry-proof';
import { clusterStatus } from './cluster';
import { observeAll } from './observe';
import { fetchValues, keysUnder, learnValue, rangePrefix } from './read';
import { createEtcdState, remember, type EtcdState } from './state';
import { watchChanges } from './watch';

export { candidateOf } from './observe';
export { etcdProblem } from './client';

const unavailable = (state: EtcdState, error: unknown, what: string) => {
  if (error instanceof SourceUnavailableError) return error;
  // An error of the JavaScript engine reads as an answer that could not be read; what it was is logged for whoever maintains this.
  if (error instanceof TypeError || error instanceof RangeError) state.log.warn({ err: error }, `${what}: an unexpected error, shown as an answer that could not be read`);
  return new SourceUnavailableError(state.config.name, `${what}: ${etcdProblem(error, state.target)}`, { cause: error });
};

/** Every key under the prefixes, the values that changed, the leases' TTLs that are due and the cluster's status. */
async function readEverything(state: EtcdState, signal: AbortSignal, progress?: Progress): Promise<SourceSnapshot> {
  const { client, config, mirror, values, pollMs } = state;
  if (signal.aborted) throw new SourceUnavailableError(config.name, 'the read was cancelled');
  try {
    const startedAt = state.clock.mono();
    const ranges = await Promise.all(config.prefixes.map((prefix) => keysUnder(client, prefix, progress)));
    state.lastRevision = ranges[0]?.revision ?? state.lastRevision;
    const kvs = ranges.flatMap((r) => r.kvs);
    for (const range of ranges) await fetchValues(client, values, range.kvs, range.revision, progress);
    mirror.clear();
    for (const kv of kvs) remember(mirror, kv);
    // Values of keys no longer there are forgotten.
    for (const key of [...values.keys()]) if (!mirror.has(key)) values.delete(key);
    // A full read speaks for every key: one found gone is simply not among the observations.
    const { observations } = await observeAll(state, kvs, true, pollMs, false, progress);
    state.lastFullAt = startedAt;
    state.lastFullMs = state.clock.mono() - startedAt;
    const status = await clusterStatus(client);
    return { observations, status };
  } catch (error) {
    throw unavailable(state, error, 'reading');
  }
}

/** A poll: a full read unless the watch keeps the mirror current, else the TTLs that are due. */
async function pollOnce(state: EtcdState, snapshot: () => Promise<SourceSnapshot>, progress?: Progress): Promise<PollResult> {
  const { pollMs } = state;
  // The mirror is only as good as a full read made once the watch was running.
  if (!state.watchLive || state.lastFullAt < state.watchLiveSince || reconcileDue(state, state.clock.mono(), pollMs)) {
    return { kind: 'full', ...(await snapshot()) };
  }
  try {
    // Keys come from the watch; only the TTLs that are due are read. The cluster's status
    // too (two small calls): a new Raft leader shows within a poll, not at the next full read.
    const [{ observations, gone }, status] = await Promise.all([observeAll(state, [...state.mirror.values()], false, pollMs, true, progress), clusterStatus(state.client)]);
    return { kind: 'partial', covered: [...observations.map((o) => o.key), ...gone], observations, status };
  } catch (error) {
    throw unavailable(state, error, 'reading lease TTLs');
  }
}

/** Reads again the leases that hints named, and puts what it found in the mirror. */
async function readLeaseKeys(state: EtcdState, keys: string[], signal: AbortSignal) {
  const { client, config, mirror, values, pollMs } = state;
  if (signal.aborted) throw new SourceUnavailableError(config.name, 'the read was cancelled');
  try {
    // A hint names a lease key: a single key, or an election (its candidates are below it).
    const reads = await Promise.all(keys.flatMap((key) => [client.kv.range({ key: Buffer.from(key, 'latin1') }), rangePrefix(client, `${key}/`)]));
    const inScope = reads.flatMap((r) => r.kvs).filter((kv) => config.prefixes.some((p) => kv.key.toString('latin1').startsWith(p)));
    for (const key of keys) {
      mirror.delete(key);
      mirror.deleteBelow(key);
    }
    for (const kv of inScope) {
      if (String(kv.lease ?? '0') !== '0') learnValue(values, kv);
      remember(mirror, kv);
    }
    return { covered: keys.map((k) => exactOf(Buffer.from(k, 'latin1'))), observations: (await observeAll(state, inScope, false, pollMs)).observations };
  } catch (error) {
    throw unavailable(state, error, 'reading');
  }
}

/** `options.clock`: what its reads, watch and expiry proofs are timed on (default: the system clock); `options.log`: its logger. */
export function createEtcdSource(config: EtcdSourceConfig, defaultPollMs: number, options: Pick<BackendContext, 'clock' | 'log'> = {}): LeaseSource {
  const state = createEtcdState(config, defaultPollMs, options.clock, options.log);
  return {
    name: config.name,
    backend: 'etcd',
    pollMs: state.pollMs,

    async snapshot(signal, progress): Promise<SourceSnapshot> {
      return readEverything(state, signal, progress);
    },

    async poll(signal, progress): Promise<PollResult> {
      return pollOnce(state, () => this.snapshot(signal, progress), progress);
    },

    async readKeys(keys, signal) {
      return readLeaseKeys(state, keys, signal);
    },

    async watch(onHint: (hint: ChangeHint) => void, signal: AbortSignal, options?: { expiries?: boolean }) {
      // The watch sees keys come and go; expiries are proven as they happen beside it.
      await Promise.all([watchChanges(state, onHint, signal), options?.expiries === false ? undefined : proveExpiries(state, onHint, signal)]);
    },

    async close() {
      state.client.close();
    },
  };
}
