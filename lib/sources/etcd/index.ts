// etcd source: elections, mutexes and single keys with a lease, under configured prefixes,
// plus the cluster's own status (leader member, Raft term and index, members).
//
// A key whose last path segment is its own lease id is a candidate in the election or mutex
// named by the rest of the key: etcd's concurrency package and `etcdctl elect`/`lock` write the
// id in hex, the etcd3 npm client in decimal; both are accepted. The leader (or lock holder)
// is the candidate with the lowest create revision, which is also the token. A candidate
// with an empty value is a mutex waiter (etcd's Mutex writes none); with a value, an election
// proposal. Any other key attached to a lease is a single lease (Leasehold's layout), its
// token its create revision. Keys without a lease are not leases and are left out.
//
// Renewals (keepalives) are invisible to a watch, so the remaining TTL is read on every poll;
// the watch only makes acquisitions, releases and expiries visible at once. After a watch
// falls behind a compaction, the source says so (a gap) instead of pretending nothing happened.
//
// Values are hostile until judged: a full read asks for keys only, and a value is fetched
// (and its exact text made, lib/domain/display.ts) only when its key's mod revision changed,
// so a megabyte of binary costs once per change, not once per read. Every call has a
// deadline, and etcd3's own retries are off: the collector backs off a failing source itself.
import { ConstantBackoff, handleWhen, noop, retry } from 'cockatiel';
import { Etcd3, isRecoverableError, type IKeyValue, type Watcher } from 'etcd3';
import type { EtcdSourceConfig } from '../../config';
import { redactUrlPassword } from '../../config';
import { displayText } from '../../domain/display';
import { exactOf } from '../exact';
import type { Observation } from '../../domain/observe';
import { SourceUnavailableError } from '../errors';
import { RECONCILE_EVERY_MS, type ChangeHint, type LeaseSource, type PollResult, type SourceSnapshot, type SourceStatusDetail } from '../types';
import { systemClock } from '../../time/clock';

const CALL_TIMEOUT_MS = 2_000;
/**
 * etcd has no call that returns many leases' TTLs at once, so each costs an RPC. A lease's
 * TTL is read when it was never read, when a quarter of its TTL has passed since its last
 * reading (so a holder renewing every third of it, as is usual, is seen at each renewal), or when
 * its time is nearly up; at most TTL_READS_PER_POLL per poll, the longest unread first.
 * Between readings its remaining time is carried forward on our clock: its key still exists,
 * so it is held, and a renewal shows at its next reading. Expiries and releases do not wait
 * for this: the key's deletion comes through the watch.
 */
const TTL_READS_PER_POLL = 1_000;
const TTL_READ_CONCURRENCY = 32;
/** Keys per page of a keys-only range, and values per transaction (etcd allows 128 operations). */
const RANGE_PAGE = 10_000;
const VALUES_PER_TXN = 64;
/** etcd takes values up to 1.5 MiB by default; a page of them may be large. */
const MAX_RECEIVE_BYTES = 64 * 1024 * 1024;

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

const hostOf = (endpoint: string) => {
  try {
    return new URL(endpoint).host;
  } catch {
    return redactUrlPassword(endpoint);
  }
};

/**
 * A gRPC error in words a person on call reads at once ("etcd at 10.0.0.5:2379 refused the
 * connection"), rather than "14 UNAVAILABLE: No connection established. Last error: ...", which
 * also carries a timestamp that would make every failure look like a new one.
 */
export function etcdProblem(error: unknown, target: string): string {
  const message = String((error as Error)?.message ?? error);
  if (/ECONNREFUSED/.test(message)) return `${target} refused the connection (is the server running, on that port?)`;
  if (/DEADLINE_EXCEEDED|timed? ?out/i.test(message)) return `${target} did not answer in time`;
  if (/Protocol error|HTTP\/1|http2|PROTOCOL_ERROR/i.test(message)) return `${target} answers, but not as etcd does (is that its client port?)`;
  if (/ECONNRESET|EPIPE|Connection dropped|closed/i.test(message)) return `${target} closed the connection`;
  if (/ENOTFOUND|EAI_AGAIN|Name resolution failed|DNS resolution/i.test(message)) return `${target}: the host name does not resolve`;
  if (/EHOSTUNREACH|ENETUNREACH/.test(message)) return `${target} cannot be reached (no route to host)`;
  if (/authentication|permission denied|invalid auth token|user name is empty/i.test(message)) return `${target} refused the credentials (check username and password)`;
  // Anything else as gRPC said it, without its timestamps.
  return redactUrlPassword(message.replace(/\s*\(\d{4}-\d\d-\d\dT[\d:.]+Z\)/g, ''));
}

function prefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i]! += 1;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]);
}

export function createEtcdSource(config: EtcdSourceConfig, defaultPollMs: number): LeaseSource {
  const client = new Etcd3({
    hosts: config.endpoints,
    defaultCallOptions: (context) => (context.isStream ? {} : { deadline: Date.now() + CALL_TIMEOUT_MS }),
    // A call that fails on one member for a reason another member may not share (refused, reset,
    // unavailable) is tried at once on each other member, in the order the client shuffled them:
    // one dead member of three is no reason to call the cluster down. Nothing more: no retry on
    // the same member, no wait, and no circuit breaker (whose "the circuit breaker is open" would
    // replace the real reason on the sources page); a read that fails on every member is the
    // collector's to back off from.
    faultHandling: {
      global: retry(handleWhen(isRecoverableError), { maxAttempts: Math.max(0, config.endpoints.length - 1), backoff: new ConstantBackoff(0) }),
      host: () => noop,
    },
    grpcOptions: { 'grpc.max_receive_message_length': MAX_RECEIVE_BYTES },
    ...(config.username ? { auth: { username: config.username, password: config.password ?? '' } } : {}),
  });
  let lastRevision: string | null = null;
  const pollMs = config.pollMs ?? defaultPollMs;

  // The exact text of each key's value, at the mod revision it was read: a value is fetched
  // and judged again only when it changed. '' stands for an empty value (a mutex waiter).
  const values = new Map<string, { revision: string; text: string } | { revision: string; problem: string }>();
  const latin1 = (kv: IKeyValue) => kv.key.toString('latin1');
  const remembered = (kv: IKeyValue) => {
    const known = values.get(latin1(kv));
    return known && known.revision === String(kv.mod_revision) ? known : undefined;
  };
  const learnValue = (kv: IKeyValue) => {
    values.set(latin1(kv), { revision: String(kv.mod_revision), text: kv.value.length === 0 ? '' : exactOf(kv.value) });
  };

  /**
   * Fetches the values not known at their current revision, a transaction of several keys at a
   * time, at the revision the keys were listed at: a key put again since then would otherwise
   * come back with another mod revision, and its listed version would have no value.
   */
  async function fetchValues(kvs: IKeyValue[], revision: string): Promise<void> {
    const wanted = kvs.filter((kv) => String(kv.lease) !== '0' && !remembered(kv));
    const one = async (kv: IKeyValue) => {
      try {
        const found = (await client.kv.range({ key: kv.key, revision })).kvs[0];
        if (found) learnValue(found);
      } catch (error) {
        if (!/RESOURCE_EXHAUSTED|larger than max/i.test(String((error as Error)?.message))) throw error;
        values.set(latin1(kv), { revision: String(kv.mod_revision), problem: `its value is larger than ${MAX_RECEIVE_BYTES / 1024 / 1024} MiB: not read` });
      }
    };
    for (let i = 0; i < wanted.length; i += VALUES_PER_TXN) {
      const batch = wanted.slice(i, i + VALUES_PER_TXN);
      try {
        const { responses } = await client.kv.txn({ success: batch.map((kv) => ({ request_range: { key: kv.key, revision } })) });
        for (const response of responses) for (const kv of response.response_range?.kvs ?? []) learnValue(kv);
      } catch (error) {
        // Too large together: one at a time, so one huge value costs only itself.
        if (!/RESOURCE_EXHAUSTED|larger than max/i.test(String((error as Error)?.message))) throw error;
        for (const kv of batch) await one(kv);
      }
    }
  }

  const target = `etcd at ${config.endpoints.map(hostOf).join(', ')}`;
  const unavailable = (error: unknown, what: string) =>
    error instanceof SourceUnavailableError ? error : new SourceUnavailableError(config.name, `${what}: ${etcdProblem(error, target)}`, { cause: error });

  function group(kvs: IKeyValue[]): Grouped {
    const elections = new Map<string, IKeyValue[]>();
    const singles: IKeyValue[] = [];
    for (const kv of kvs) {
      const lease = String(kv.lease);
      if (lease === '0') continue;
      const election = candidateOf(kv.key.toString('latin1'), lease);
      if (election !== null) elections.set(election, [...(elections.get(election) ?? []), kv]);
      else singles.push(kv);
    }
    return { elections, singles };
  }

  type TtlReading = { remainingMs: number; ttlMs: number; readAt: number } | null;
  const ttlReadings = new Map<string, TtlReading>();

  async function readTtl(leaseId: string): Promise<TtlReading> {
    const { TTL, grantedTTL } = await client.leaseClient.leaseTimeToLive({ ID: leaseId });
    // Negative: expired or revoked between the two reads.
    return Number(TTL) < 0 ? null : { remainingMs: Number(TTL) * 1000, ttlMs: Number(grantedTTL) * 1000, readAt: performance.now() };
  }

  /** Reads the TTLs that are due (within this poll's budget), and returns every wanted lease's current estimate. */
  async function leaseTtls(wanted: string[], pollMs: number, readNow?: Set<string>): Promise<Map<string, { remainingMs: number; ttlMs: number } | null>> {
    const unique = [...new Set(wanted)];
    const now = performance.now();
    const due = (id: string) => {
      const reading = ttlReadings.get(id);
      if (!reading) return true; // never read, or gone at its last reading
      const age = now - reading.readAt;
      return age >= Math.max(pollMs, reading.ttlMs / 4) || reading.remainingMs - age < 2 * pollMs;
    };
    const order = unique
      .filter(due)
      .map((id) => ({ id, readAt: ttlReadings.get(id)?.readAt ?? -Infinity }))
      .sort((a, b) => a.readAt - b.readAt)
      .slice(0, TTL_READS_PER_POLL)
      .map((entry) => entry.id);
    for (let i = 0; i < order.length; i += TTL_READ_CONCURRENCY) {
      const batch = order.slice(i, i + TTL_READ_CONCURRENCY);
      const readings = await Promise.all(batch.map(readTtl));
      batch.forEach((id, index) => {
        ttlReadings.set(id, readings[index]!);
        readNow?.add(id);
      });
    }
    const after = performance.now();
    const result = new Map<string, { remainingMs: number; ttlMs: number } | null>();
    for (const id of unique) {
      if (!ttlReadings.has(id)) continue; // not read yet: unknown, not gone
      const reading = ttlReadings.get(id);
      // etcd reports whole seconds, rounded down: "0" means less than a second is left. The
      // key still exists, so the lease has not run out (etcd deletes its keys when it does).
      result.set(id, reading ? { remainingMs: Math.max(1, Math.round(reading.remainingMs - (after - reading.readAt))), ttlMs: reading.ttlMs } : null);
    }
    return result;
  }

  function leaderOf(candidates: IKeyValue[]): IKeyValue[] {
    return [...candidates].sort((a, b) => (BigInt(a.create_revision) < BigInt(b.create_revision) ? -1 : 1));
  }

  /** A key's value as exact text ('' when empty), or why it could not be read. */
  const valueOf = (kv: IKeyValue): { text: string } | { problem: string } => {
    const known = remembered(kv);
    if (known) return known;
    // Not fetched (a key seen by a watch event carries its value): judge it now.
    learnValue(kv);
    return remembered(kv)!;
  };
  const problemOf = (kvs: IKeyValue[]) => {
    for (const kv of kvs) {
      const value = valueOf(kv);
      if ('problem' in value) return `${displayText(kv.key, 80)}: ${value.problem}`;
    }
    return null;
  };
  const textOf = (kv: IKeyValue) => {
    const value = valueOf(kv);
    return 'text' in value ? value.text : '';
  };

  function observeElection(name: string, ordered: IKeyValue[], ttl: { remainingMs: number; ttlMs: number } | null | undefined): Observation {
    const leader = ordered[0]!;
    const problem = problemOf(ordered);
    const mutex = ordered.every((kv) => textOf(kv) === '');
    const holderOf = (kv: IKeyValue) => (textOf(kv) === '' ? `lease ${BigInt(String(kv.lease)).toString(16)}` : textOf(kv));
    return {
      ...(problem ? { problem } : {}),
      key: exactOf(Buffer.from(name, 'latin1')),
      kind: mutex ? 'lock' : 'election',
      holder: holderOf(leader),
      token: BigInt(leader.create_revision),
      ttlMs: ttl?.ttlMs ?? null,
      // null: its TTL has not been read yet (the key exists, so it is held); 0: the lease was
      // found gone when it was read.
      remainingMs: ttl === undefined ? null : ttl ? ttl.remainingMs : 0,
      precisionMs: 1_000,
      candidates: ordered.slice(1).map((kv) => ({ holder: holderOf(kv), token: BigInt(kv.create_revision) })),
      detail: {
        layout: mutex ? 'etcd mutex' : 'etcd election',
        leaderKey: displayText(leader.key, 300),
        leaseId: BigInt(String(leader.lease)).toString(16),
      },
    };
  }

  function observeSingle(kv: IKeyValue, ttl: { remainingMs: number; ttlMs: number } | null | undefined): Observation {
    const problem = problemOf([kv]);
    return {
      ...(problem ? { problem } : {}),
      key: exactOf(kv.key),
      kind: 'lock',
      holder: textOf(kv) === '' ? null : textOf(kv),
      token: BigInt(kv.create_revision),
      ttlMs: ttl?.ttlMs ?? null,
      remainingMs: ttl === undefined ? null : ttl ? ttl.remainingMs : 0,
      precisionMs: 1_000,
      candidates: [],
      detail: { layout: 'single key with a lease', leaseId: BigInt(String(kv.lease)).toString(16) },
    };
  }

  /**
   * Observations of the leases among `kvs`. `onlyRead`: only those whose TTL was read now
   * (a poll while the watch is live: the others have nothing new to say).
   */
  async function observeAll(kvs: IKeyValue[], forget: boolean, pollMs: number, onlyRead = false): Promise<Observation[]> {
    const { elections, singles } = group(kvs);
    const ordered = [...elections].map(([name, candidates]) => [name, leaderOf(candidates)] as const);
    const leases = [...ordered.map(([, c]) => String(c[0]!.lease)), ...singles.map((kv) => String(kv.lease))];
    const readNow = new Set<string>();
    const ttls = await leaseTtls(leases, pollMs, readNow);
    // After a full read, readings of leases no longer seen are dropped.
    if (forget) for (const id of [...ttlReadings.keys()]) if (!ttls.has(id)) ttlReadings.delete(id);
    const wanted = (lease: string) => !onlyRead || readNow.has(lease);
    return [
      ...ordered.filter(([, c]) => wanted(String(c[0]!.lease))).map(([name, candidates]) => observeElection(name, candidates, ttls.get(String(candidates[0]!.lease)))),
      ...singles.filter((kv) => wanted(String(kv.lease))).map((kv) => observeSingle(kv, ttls.get(String(kv.lease)))),
    ];
  }

  // The keys under the prefixes, kept current by full reads, targeted reads and the watch:
  // while the watch is live, a poll builds on it instead of reading every key again.
  const mirror = new Map<string, IKeyValue>();
  let watchLive = false;
  let watchLiveSince = Infinity;
  let lastFullAt = -Infinity;
  const remember = (kv: IKeyValue) => {
    const key = kv.key.toString('latin1');
    if (String(kv.lease ?? '0') === '0') mirror.delete(key);
    else mirror.set(key, kv);
  };

  /** Watches every prefix from `from` until the signal aborts or a watcher fails. */
  async function watchRound(
    from: string,
    leaseKeysOf: (kv: IKeyValue) => string[],
    onHint: (hint: ChangeHint) => void,
    signal: AbortSignal,
  ): Promise<'aborted' | 'compacted' | 'canceled' | 'failed'> {
    const watchers: Watcher[] = [];
    let finish: (how: 'aborted' | 'compacted' | 'canceled' | 'failed') => void = () => {};
    const ended = new Promise<'aborted' | 'compacted' | 'canceled' | 'failed'>((resolve) => (finish = resolve));
    const onAbort = () => finish('aborted');
    signal.addEventListener('abort', onAbort, { once: true });
    const onPut = (kv: IKeyValue) => {
      lastRevision = String(kv.mod_revision ?? lastRevision);
      if (String(kv.lease ?? '0') !== '0') learnValue(kv);
      remember(kv);
      onHint({ keys: leaseKeysOf(kv) });
    };
    const onDelete = (kv: IKeyValue) => {
      lastRevision = String(kv.mod_revision ?? lastRevision);
      // A delete carries no lease id: the key as last seen says which lease it belonged to.
      const key = kv.key.toString('latin1');
      const before = mirror.get(key);
      mirror.delete(key);
      values.delete(key);
      onHint({ keys: leaseKeysOf(before ?? kv) });
    };
    try {
      for (const prefix of config.prefixes) {
        const watcher = await client.watch().prefix(Buffer.from(prefix, 'latin1')).startRevision(from).create();
        watchers.push(watcher);
        watcher.on('put', onPut);
        watcher.on('delete', onDelete);
        // etcd cancels a watch whose start revision was compacted away; 3.4 gives no reason.
        watcher.on('error', (error: Error) => finish(/compacted/i.test(error.message) ? 'compacted' : /canceled/i.test(error.message) ? 'canceled' : 'failed'));
      }
      if (signal.aborted) return 'aborted';
      watchLive = true;
      watchLiveSince = performance.now();
      return await ended;
    } catch (error) {
      return /compacted/i.test((error as Error)?.message ?? '') ? 'compacted' : 'failed';
    } finally {
      // Not live any more: until the next round is, polls read everything.
      watchLive = false;
      signal.removeEventListener('abort', onAbort);
      // cancel() waits for the watcher to be connected first, which a cancelled one never
      // will be again: do not wait for it longer than a moment.
      await Promise.all(
        watchers.map((watcher) => Promise.race([watcher.cancel().catch(() => {}), systemClock.sleep(1_000)])),
      );
    }
  }

  async function rangePrefix(prefix: string) {
    const start = Buffer.from(prefix, 'latin1');
    return client.kv.range({ key: start, range_end: prefixEnd(start) });
  }

  /** Every key under a prefix, without values, a page at a time, at one revision. */
  async function keysUnder(prefix: string): Promise<{ kvs: IKeyValue[]; revision: string }> {
    const start = Buffer.from(prefix, 'latin1');
    const end = prefixEnd(start);
    const kvs: IKeyValue[] = [];
    let from = start;
    let revision: string | undefined;
    for (;;) {
      const page = await client.kv.range({ key: from, range_end: end, keys_only: true, limit: RANGE_PAGE, ...(revision ? { revision } : {}) });
      revision ??= String(page.header.revision);
      kvs.push(...page.kvs);
      if (!page.more || page.kvs.length === 0) return { kvs, revision };
      from = Buffer.concat([page.kvs[page.kvs.length - 1]!.key, Buffer.from([0])]);
    }
  }

  async function clusterStatus(): Promise<SourceStatusDetail> {
    const [status, members] = await Promise.all([client.maintenance.status(), client.cluster.memberList({})]);
    const leaderId = String(status.leader);
    return {
      leader: members.members.find((m) => String(m.ID) === leaderId)?.name ?? BigInt(leaderId).toString(16),
      raftTerm: String(status.raftTerm),
      raftIndex: String(status.raftIndex),
      version: status.version,
      members: members.members.map((m) => ({
        id: BigInt(String(m.ID)).toString(16),
        name: m.name,
        clientURLs: m.clientURLs.map((u) => redactUrlPassword(u)),
        isLeader: String(m.ID) === leaderId,
      })),
    };
  }

  return {
    name: config.name,
    backend: 'etcd',
    pollMs,

    async snapshot(signal): Promise<SourceSnapshot> {
      if (signal.aborted) throw new SourceUnavailableError(config.name, 'the read was cancelled');
      try {
        const startedAt = performance.now();
        const ranges = await Promise.all(config.prefixes.map(keysUnder));
        lastRevision = ranges[0]?.revision ?? lastRevision;
        const kvs = ranges.flatMap((r) => r.kvs);
        for (const range of ranges) await fetchValues(range.kvs, range.revision);
        mirror.clear();
        for (const kv of kvs) remember(kv);
        // Values of keys no longer there are forgotten.
        for (const key of [...values.keys()]) if (!mirror.has(key)) values.delete(key);
        const observations = await observeAll(kvs, true, pollMs);
        lastFullAt = startedAt;
        const status = await clusterStatus();
        return { observations, status };
      } catch (error) {
        throw unavailable(error, 'reading');
      }
    },

    async poll(signal): Promise<PollResult> {
      // The mirror is only as good as a full read made once the watch was running.
      if (!watchLive || lastFullAt < watchLiveSince || performance.now() - lastFullAt >= Math.max(RECONCILE_EVERY_MS, 10 * pollMs)) {
        return { kind: 'full', ...(await this.snapshot(signal)) };
      }
      try {
        // Keys come from the watch; only the TTLs that are due are read. The cluster's status
        // too (two small calls): a new Raft leader shows within a poll, not at the next full read.
        const [observations, status] = await Promise.all([observeAll([...mirror.values()], false, pollMs, true), clusterStatus()]);
        return { kind: 'partial', covered: observations.map((o) => o.key), observations, status };
      } catch (error) {
        throw unavailable(error, 'reading lease TTLs');
      }
    },

    async readKeys(keys, signal) {
      if (signal.aborted) throw new SourceUnavailableError(config.name, 'the read was cancelled');
      try {
        // A hint names a lease key: a single key, or an election (its candidates are below it).
        const reads = await Promise.all(keys.flatMap((key) => [client.kv.range({ key: Buffer.from(key, 'latin1') }), rangePrefix(`${key}/`)]));
        const inScope = reads.flatMap((r) => r.kvs).filter((kv) => config.prefixes.some((p) => kv.key.toString('latin1').startsWith(p)));
        for (const key of keys) {
          mirror.delete(key);
          for (const known of mirror.keys()) if (known.startsWith(`${key}/`)) mirror.delete(known);
        }
        for (const kv of inScope) {
          if (String(kv.lease ?? '0') !== '0') learnValue(kv);
          remember(kv);
        }
        return { covered: keys.map((k) => exactOf(Buffer.from(k, 'latin1'))), observations: await observeAll(inScope, false, pollMs) };
      } catch (error) {
        throw unavailable(error, 'reading');
      }
    },

    async watch(onHint: (hint: ChangeHint) => void, signal: AbortSignal) {
      // Each event names a key; the lease it belongs to is what gets re-read.
      const leaseKeysOf = (kv: IKeyValue): string[] => {
        const key = kv.key.toString('latin1');
        const lease = String(kv.lease ?? '0');
        const slash = key.lastIndexOf('/');
        if (candidateOf(key, lease) !== null) return [key.slice(0, slash)];
        // A delete of a key never seen carries no lease id: it may be a candidate (its last
        // segment a lease id) or a single key; both are read again.
        if (lease === '0' && slash > 0 && /^[0-9a-f]+$/i.test(key.slice(slash + 1))) return [key, key.slice(0, slash)];
        return [key];
      };
      while (!signal.aborted) {
        let from: string;
        try {
          // Resume after the last revision seen; the first time, from now.
          from = lastRevision ? (BigInt(lastRevision) + 1n).toString() : (BigInt((await client.kv.range({ key: Buffer.from(config.prefixes[0]!), limit: 1 })).header.revision) + 1n).toString();
        } catch {
          await systemClock.sleep(1_000, signal);
          continue;
        }
        let ended = await watchRound(from, leaseKeysOf, onHint, signal);
        if (ended === 'aborted') return;
        if (ended === 'canceled') {
          // Was it a compaction? A read at the revision we resumed from says so.
          ended = await client.kv
            .range({ key: Buffer.from(config.prefixes[0]!, 'latin1'), revision: lastRevision ? (BigInt(lastRevision) + 1n).toString() : from, limit: 1 })
            .then(
              () => 'failed' as const,
              (error: Error) => (/compacted/i.test(error.message) ? ('compacted' as const) : ('failed' as const)),
            );
        }
        if (ended === 'compacted') {
          // Events between the last revision seen and the compaction are gone: say so.
          lastRevision = null;
          onHint({ full: true, gap: true, reason: 'the etcd watch fell behind a compaction' });
        } else {
          await systemClock.sleep(1_000, signal);
        }
      }
    },

    async close() {
      client.close();
    },
  };
}
