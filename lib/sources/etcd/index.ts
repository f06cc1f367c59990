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
import { Etcd3, type IKeyValue, type Watcher } from 'etcd3';
import type { EtcdSourceConfig } from '../../config';
import { redactUrlPassword } from '../../config';
import { displayText } from '../../domain/display';
import type { Observation } from '../../domain/observe';
import { SourceUnavailableError } from '../errors';
import type { ChangeHint, LeaseSource, SourceSnapshot, SourceStatusDetail } from '../types';

const CALL_TIMEOUT_MS = 2_000;

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
    ...(config.username ? { auth: { username: config.username, password: config.password ?? '' } } : {}),
  });
  let lastRevision: string | null = null;

  const unavailable = (error: unknown, what: string) =>
    error instanceof SourceUnavailableError
      ? error
      : new SourceUnavailableError(config.name, `${what}: ${redactUrlPassword((error as Error)?.message ?? String(error))}`, { cause: error });

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

  async function leaseTtl(leaseId: string): Promise<{ remainingMs: number; ttlMs: number } | null> {
    const { TTL, grantedTTL } = await client.leaseClient.leaseTimeToLive({ ID: leaseId });
    if (Number(TTL) < 0) return null; // expired or revoked between the two reads
    // etcd reports whole seconds, rounded down: "0" means less than a second is left, and
    // the key still exists, so the lease has not run out (etcd deletes its keys when it does).
    return { remainingMs: Math.max(1, Number(TTL) * 1000), ttlMs: Number(grantedTTL) * 1000 };
  }

  async function observeElection(name: string, candidates: IKeyValue[]): Promise<Observation | null> {
    const ordered = [...candidates].sort((a, b) => (BigInt(a.create_revision) < BigInt(b.create_revision) ? -1 : 1));
    const leader = ordered[0]!;
    const mutex = ordered.every((kv) => kv.value.length === 0);
    const holderOf = (kv: IKeyValue) => (kv.value.length === 0 ? `lease ${BigInt(String(kv.lease)).toString(16)}` : displayText(kv.value));
    const ttl = await leaseTtl(String(leader.lease));
    return {
      key: displayText(Buffer.from(name, 'latin1')),
      kind: mutex ? 'lock' : 'election',
      holder: holderOf(leader),
      token: BigInt(leader.create_revision),
      ttlMs: ttl?.ttlMs ?? null,
      remainingMs: ttl ? ttl.remainingMs : 0,
      precisionMs: 1_000,
      candidates: ordered.slice(1).map((kv) => ({ holder: holderOf(kv), token: BigInt(kv.create_revision) })),
      detail: {
        layout: mutex ? 'etcd mutex' : 'etcd election',
        leaderKey: displayText(leader.key),
        leaseId: BigInt(String(leader.lease)).toString(16),
      },
    };
  }

  async function observeSingle(kv: IKeyValue): Promise<Observation> {
    const ttl = await leaseTtl(String(kv.lease));
    return {
      key: displayText(kv.key),
      kind: 'lock',
      holder: displayText(kv.value),
      token: BigInt(kv.create_revision),
      ttlMs: ttl?.ttlMs ?? null,
      remainingMs: ttl ? ttl.remainingMs : 0,
      precisionMs: 1_000,
      candidates: [],
      detail: { layout: 'single key with a lease', leaseId: BigInt(String(kv.lease)).toString(16) },
    };
  }

  async function observeAll(kvs: IKeyValue[]): Promise<Observation[]> {
    const { elections, singles } = group(kvs);
    const reads = [
      ...[...elections].map(([name, candidates]) => observeElection(name, candidates)),
      ...singles.map((kv) => observeSingle(kv)),
    ];
    return (await Promise.all(reads)).filter((o): o is Observation => o !== null);
  }

  /** Watches every prefix from `from` until the signal aborts or a watcher fails. */
  async function watchRound(
    from: string,
    leaseKeyOf: (kv: IKeyValue) => string,
    onHint: (hint: ChangeHint) => void,
    signal: AbortSignal,
  ): Promise<'aborted' | 'compacted' | 'canceled' | 'failed'> {
    const watchers: Watcher[] = [];
    let finish: (how: 'aborted' | 'compacted' | 'canceled' | 'failed') => void = () => {};
    const ended = new Promise<'aborted' | 'compacted' | 'canceled' | 'failed'>((resolve) => (finish = resolve));
    const onAbort = () => finish('aborted');
    signal.addEventListener('abort', onAbort, { once: true });
    const onKv = (kv: IKeyValue) => {
      lastRevision = String(kv.mod_revision ?? lastRevision);
      onHint({ keys: [leaseKeyOf(kv)] });
    };
    try {
      for (const prefix of config.prefixes) {
        const watcher = await client.watch().prefix(Buffer.from(prefix, 'latin1')).startRevision(from).create();
        watchers.push(watcher);
        watcher.on('put', onKv);
        watcher.on('delete', onKv);
        // etcd cancels a watch whose start revision was compacted away; 3.4 gives no reason.
        watcher.on('error', (error: Error) => finish(/compacted/i.test(error.message) ? 'compacted' : /canceled/i.test(error.message) ? 'canceled' : 'failed'));
      }
      if (signal.aborted) return 'aborted';
      return await ended;
    } catch (error) {
      return /compacted/i.test((error as Error)?.message ?? '') ? 'compacted' : 'failed';
    } finally {
      signal.removeEventListener('abort', onAbort);
      // cancel() waits for the watcher to be connected first, which a cancelled one never
      // will be again: do not wait for it longer than a moment.
      await Promise.all(
        watchers.map((watcher) => Promise.race([watcher.cancel().catch(() => {}), new Promise((resolve) => setTimeout(resolve, 1_000))])),
      );
    }
  }

  async function rangePrefix(prefix: string) {
    const start = Buffer.from(prefix, 'latin1');
    return client.kv.range({ key: start, range_end: prefixEnd(start) });
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
    pollMs: config.pollMs ?? defaultPollMs,

    async snapshot(signal): Promise<SourceSnapshot> {
      if (signal.aborted) throw new SourceUnavailableError(config.name, 'the read was cancelled');
      try {
        const ranges = await Promise.all(config.prefixes.map(rangePrefix));
        lastRevision = ranges[0]?.header.revision ?? lastRevision;
        const observations = await observeAll(ranges.flatMap((r) => r.kvs));
        const status = await clusterStatus();
        return { observations, status };
      } catch (error) {
        throw unavailable(error, 'reading');
      }
    },

    async readKeys(keys, signal) {
      if (signal.aborted) throw new SourceUnavailableError(config.name, 'the read was cancelled');
      try {
        // A hint names a lease key: a single key, or an election (its candidates are below it).
        const reads = await Promise.all(keys.flatMap((key) => [client.kv.range({ key: Buffer.from(key, 'latin1') }), rangePrefix(`${key}/`)]));
        const inScope = reads.flatMap((r) => r.kvs).filter((kv) => config.prefixes.some((p) => kv.key.toString('latin1').startsWith(p)));
        return { covered: keys.map((k) => displayText(Buffer.from(k, 'latin1'))), observations: await observeAll(inScope) };
      } catch (error) {
        throw unavailable(error, 'reading');
      }
    },

    async watch(onHint: (hint: ChangeHint) => void, signal: AbortSignal) {
      // Each event names a key; the lease it belongs to is what gets re-read.
      const leaseKeyOf = (kv: IKeyValue) => {
        const key = kv.key.toString('latin1');
        const lease = String(kv.lease ?? '0');
        const slash = key.lastIndexOf('/');
        const segment = key.slice(slash + 1);
        // A delete carries no lease id: a key ending in what looks like one is a candidate.
        if (candidateOf(key, lease) !== null || (lease === '0' && slash > 0 && /^[0-9a-f]{6,}$/i.test(segment))) return key.slice(0, slash);
        return key;
      };
      while (!signal.aborted) {
        let from: string;
        try {
          // Resume after the last revision seen; the first time, from now.
          from = lastRevision ? (BigInt(lastRevision) + 1n).toString() : (BigInt((await client.kv.range({ key: Buffer.from(config.prefixes[0]!), limit: 1 })).header.revision) + 1n).toString();
        } catch {
          await new Promise((resolve) => setTimeout(resolve, 1_000));
          continue;
        }
        let ended = await watchRound(from, leaseKeyOf, onHint, signal);
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
          await new Promise((resolve) => setTimeout(resolve, 1_000));
        }
      }
    },

    async close() {
      client.close();
    },
  };
}
