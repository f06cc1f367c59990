// Decoding keys into Observations: which keys are candidates in an election or mutex and which
// are single leases, who leads, and each lease's holder, token and remaining time.
import type { IKeyValue } from 'etcd3';
import { displayText } from '../../domain/display';
import type { Observation } from '../../domain/observe';
import { exactOf } from '../exact';
import type { Progress } from '../types';
import { learnValue, remembered, type ValueMemo } from './read';
import type { EtcdState } from './state';
import { scheduleProofRead } from './expiry-proof';
import { leaseTtls, type TtlEstimate } from './ttl';
import { breathe, ITEMS_PER_BREATH } from '../../time/clock';

// A key whose last path segment is its own lease id is a candidate in the election or mutex
// named by the rest of the key: etcd's concurrency package and `etcdctl elect`/`lock` write the
// id in hex, the etcd3 npm client in decimal; both are accepted. The leader (or lock holder)
// is the candidate with the lowest create revision, which is also the token. A candidate
// with an empty value is a mutex waiter (etcd's Mutex writes none); with a value, an election
// proposal. Any other key attached to a lease is a single lease (Leasehold's layout), its
// token its create revision. Keys without a lease are not leases and are left out.

type Grouped = { elections: Map<string, IKeyValue[]>; singles: IKeyValue[] };

/** The election a key is a candidate in, or null when it is not a candidate key. */
export function candidateOf(key: string, leaseId: string): string | null {
  const slash = key.lastIndexOf('/');
  if (slash <= 0 || leaseId === '0') return null;
  const segment = key.slice(slash + 1).toLowerCase();
  const id = BigInt(leaseId);
  if (segment === id.toString(16) || segment === id.toString(10)) return key.slice(0, slash);
  return null;
}

/** Each key's election (or null), worked out once per key as the mirror holds it (a poll groups every key, every second). */
const electionOfKv = new WeakMap<IKeyValue, string | null>();

async function group(kvs: IKeyValue[]): Promise<Grouped> {
  const elections = new Map<string, IKeyValue[]>();
  const singles: IKeyValue[] = [];
  let done = 0;
  for (const kv of kvs) {
    if (++done % ITEMS_PER_BREATH === 0) await breathe();
    const lease = String(kv.lease);
    if (lease === '0') continue;
    let election = electionOfKv.get(kv);
    if (election === undefined) electionOfKv.set(kv, (election = candidateOf(kv.key.toString('latin1'), lease)));
    if (election !== null) {
      const candidates = elections.get(election);
      if (candidates) candidates.push(kv);
      else elections.set(election, [kv]);
    } else singles.push(kv);
  }
  return { elections, singles };
}

function leaderOf(candidates: IKeyValue[]): IKeyValue[] {
  return [...candidates].sort((a, b) => (BigInt(a.create_revision) < BigInt(b.create_revision) ? -1 : 1));
}

/** A key's value as exact text ('' when empty), or why it could not be read. */
const valueOf = (values: ValueMemo, kv: IKeyValue): { text: string } | { problem: string } => {
  const known = remembered(values, kv);
  if (known) return known;
  // Not fetched (a key seen by a watch event carries its value): judge it now.
  learnValue(values, kv);
  return remembered(values, kv)!;
};
const problemOf = (values: ValueMemo, kvs: IKeyValue[]) => {
  for (const kv of kvs) {
    const value = valueOf(values, kv);
    if ('problem' in value) return `${displayText(kv.key, 80)}: ${value.problem}`;
  }
  return null;
};
const textOf = (values: ValueMemo, kv: IKeyValue) => {
  const value = valueOf(values, kv);
  return 'text' in value ? value.text : '';
};

function observeElection(values: ValueMemo, name: string, ordered: IKeyValue[], ttl: Exclude<TtlEstimate, null> | undefined): Observation {
  const leader = ordered[0]!;
  const problem = problemOf(values, ordered);
  const mutex = ordered.every((kv) => textOf(values, kv) === '');
  const holderOf = (kv: IKeyValue) => (textOf(values, kv) === '' ? `lease ${BigInt(String(kv.lease)).toString(16)}` : textOf(values, kv));
  return {
    ...(problem ? { problem } : {}),
    key: exactOf(Buffer.from(name, 'latin1')),
    kind: mutex ? 'lock' : 'election',
    holder: holderOf(leader),
    token: BigInt(leader.create_revision),
    ttlMs: ttl?.ttlMs ?? null,
    // null: its TTL has not been read yet (the key exists, so it is held); below 0: proven to
    // have run out (ttl-proof.ts).
    remainingMs: ttl?.remainingMs ?? null,
    precisionMs: 1_000,
    candidates: ordered.slice(1).map((kv) => ({ holder: holderOf(kv), token: BigInt(kv.create_revision) })),
    detail: {
      layout: mutex ? 'etcd mutex' : 'etcd election',
      leaderKey: displayText(leader.key, 300),
      leaseId: BigInt(String(leader.lease)).toString(16),
    },
  };
}

function observeSingle(values: ValueMemo, kv: IKeyValue, ttl: Exclude<TtlEstimate, null> | undefined): Observation {
  const problem = problemOf(values, [kv]);
  return {
    ...(problem ? { problem } : {}),
    key: exactOf(kv.key),
    kind: 'lock',
    holder: textOf(values, kv) === '' ? null : textOf(values, kv),
    token: BigInt(kv.create_revision),
    ttlMs: ttl?.ttlMs ?? null,
    remainingMs: ttl?.remainingMs ?? null,
    precisionMs: 1_000,
    candidates: [],
    detail: { layout: 'single key with a lease', leaseId: BigInt(String(kv.lease)).toString(16) },
  };
}

/**
 * Observations of the leases among `kvs`, and the lease keys found gone: a key whose lease etcd
 * answered it no longer has was deleted with it (a revocation deletes a lease's keys in the
 * same step), whether its holder revoked it or it ran out. Such a key is gone, not "run out
 * now": how it ended is judged by when it went (lib/domain/transition.ts), and an election
 * whose leader went is led by the next candidate. `onlyRead`: only the leases whose TTL was
 * read now (a poll while the watch is live: the others have nothing new to say).
 */
export async function observeAll(
  state: EtcdState,
  kvs: IKeyValue[],
  forget: boolean,
  pollMs: number,
  onlyRead = false,
  progress?: Progress,
): Promise<{ observations: Observation[]; gone: string[] }> {
  const { ttlReadings, values } = state;
  const first = await group(kvs);
  const leaders = [...first.elections.values()].map((candidates) => String(leaderOf(candidates)[0]!.lease));
  const leases = [...leaders, ...first.singles.map((kv) => String(kv.lease))];
  const readNow = new Set<string>();
  const ttls = await leaseTtls(state.client, ttlReadings, leases, pollMs, readNow, (id, reading) => {
    progress?.();
    scheduleProofRead(state, id, reading);
  }, state.clock);
  // After a full read, readings of leases no longer seen are dropped.
  if (forget) {
    for (const id of [...ttlReadings.keys()]) {
      if (ttls.has(id)) continue;
      ttlReadings.delete(id);
      state.toldEnds.delete(id);
      state.proofReads.delete(id);
    }
  }
  const goneLeases = new Set(leases.filter((id) => ttls.get(id) === null));
  const { elections, singles } = goneLeases.size ? await group(kvs.filter((kv) => !goneLeases.has(String(kv.lease)))) : first;
  const gone = [
    ...first.singles.filter((kv) => goneLeases.has(String(kv.lease))).map((kv) => exactOf(kv.key)),
    ...[...first.elections.keys()].filter((name) => !elections.has(name)).map((name) => exactOf(Buffer.from(name, 'latin1'))),
  ];
  const wanted = (lease: string) => !onlyRead || readNow.has(lease);
  const estimateOf = (lease: string) => {
    const ttl = ttls.get(lease);
    if (ttl) state.toldEnds.set(lease, ttlReadings.get(lease)?.earliestEnd ?? -Infinity);
    return ttl ?? undefined;
  };
  const observations: Observation[] = [];
  let done = 0;
  for (const [name, candidates] of elections) {
    if (++done % ITEMS_PER_BREATH === 0) await breathe();
    const ordered = leaderOf(candidates);
    // A poll speaks for an election whose leader's TTL it read, or whose leader it found gone.
    const before = first.elections.get(name)!;
    if (!wanted(String(ordered[0]!.lease)) && !(before.length !== candidates.length && wanted(String(leaderOf(before)[0]!.lease)))) continue;
    observations.push(observeElection(values, name, ordered, estimateOf(String(ordered[0]!.lease))));
  }
  for (const kv of singles) {
    if (++done % ITEMS_PER_BREATH === 0) await breathe();
    if (wanted(String(kv.lease))) observations.push(observeSingle(values, kv, estimateOf(String(kv.lease))));
  }
  return { observations, gone };
}
