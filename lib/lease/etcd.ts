// Leases in etcd.
//
// A single lease on key K: an etcd lease (TTL in whole seconds) and a transaction that
// creates K only if its create revision is 0, i.e. nobody has it. The fencing token is K's
// create revision: etcd's revision grows with every write to the cluster, so a later
// grant always has a higher one.
//
// An election on prefix P uses the key layout of etcd's own `concurrency` package, so
// `etcdctl elect --listen P` and Go clients see the same leader: each candidate writes
// P/<its lease id in hex> with its lease, and the leader is the candidate whose key has the
// lowest create revision (not the lowest key name). Waiting candidates keep their keys
// (and their place in the queue) alive with keepalives.
import { Etcd3, EtcdLeaseInvalidError, type IOptions } from 'etcd3';
import { DEFAULT_CALL_TIMEOUT_MS, withDeadline } from './deadline';
import { BackendUnavailableError, LeaseLostError } from './errors';
import type { CallOptions, Candidacy, Grant, LeaseBackend, LeaseInfo } from './types';

export type EtcdLeaseOptions = {
  endpoints: string[];
  username?: string;
  password?: string;
  callTimeoutMs?: number;
};

/** etcd keeps leases for whole seconds, and refuses to keep one for less than about 2 s. */
export const ETCD_MIN_TTL_MS = 2_000;

const UNAVAILABLE = /GRPC(ConnectFailed|DeadlineExceeded|Unavailable|Cancelled)|ECONNREFUSED|UNAVAILABLE|deadline|No connection established|ClientClosed|etcdserver: (request timed out|leader changed|no leader)/i;

function translate(error: unknown, what: string): unknown {
  const text = `${(error as Error)?.name ?? ''} ${(error as Error)?.message ?? String(error)}`;
  if (UNAVAILABLE.test(text)) return new BackendUnavailableError('etcd', `${what}: ${(error as Error)?.message ?? text}`, { cause: error });
  return error;
}

const bytes = (text: string) => Buffer.from(text);
/** The end of the key range of every key starting with `prefix`. */
function prefixEnd(prefix: string): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i]! += 1;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]);
}

export function createEtcdBackend(options: EtcdLeaseOptions): LeaseBackend {
  const timeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  const clientOptions: IOptions = {
    hosts: options.endpoints,
    // Without a deadline a call can hang for seconds while a member dies (measured here).
    defaultCallOptions: (context) => (context.isStream ? {} : { deadline: Date.now() + timeoutMs }),
    ...(options.username ? { auth: { username: options.username, password: options.password ?? '' } } : {}),
  };
  const etcd: Etcd = { client: new Etcd3(clientOptions), timeoutMs };

  return {
    kind: 'etcd',
    minTtlMs: ETCD_MIN_TTL_MS,
    // One Raft leader keeps the lease clock; the TTL is also rounded up to whole seconds.
    driftAllowanceMs: () => 0,
    tryAcquire: (key, holder, ttlMs, callOptions) => acquire(etcd, key, holder, ttlMs, callOptions),
    renew: (key, holder, grant, _ttlMs, callOptions) => renew(etcd, key, holder, grant, callOptions),
    release: (key, holder, grant, callOptions) => release(etcd, key, holder, grant, callOptions),
    inspect: (key, callOptions) => inspect(etcd, key, callOptions),
    campaign: (prefix, holder, ttlMs) => campaign(etcd, prefix, holder, ttlMs),
    async close() {
      etcd.client.close();
    },
  };
}

/** What every call shares: the client and the deadline of each call. */
type Etcd = { client: Etcd3; timeoutMs: number };

function call<T>(etcd: Etcd, what: string, callOptions: CallOptions | undefined, work: () => Promise<T>): Promise<T> {
  return withDeadline('etcd', what, etcd.timeoutMs, callOptions?.signal, async () => {
    try {
      return await work();
    } catch (error) {
      throw translate(error, what);
    }
  });
}

function ttlSeconds(ttlMs: number): number {
  if (ttlMs < ETCD_MIN_TTL_MS) throw new RangeError(`etcd leases last at least ${ETCD_MIN_TTL_MS} ms; asked for ${ttlMs} ms`);
  return Math.ceil(ttlMs / 1000);
}

async function grantLease(client: Etcd3, ttlMs: number): Promise<string> {
  return (await client.leaseClient.leaseGrant({ TTL: ttlSeconds(ttlMs) })).ID;
}

async function revoke(client: Etcd3, leaseId: string) {
  // The lease may already have expired; that is what we wanted anyway.
  await client.leaseClient.leaseRevoke({ ID: leaseId }).catch(() => {});
}

/** One keepalive; resolves the remaining TTL in seconds (0: the lease is gone). */
async function keepAliveOnce(client: Etcd3, leaseId: string): Promise<number> {
  const stream = await client.leaseClient.leaseKeepAlive();
  try {
    return await new Promise<number>((resolve, reject) => {
      stream.on('data', (response) => resolve(Number(response.TTL)));
      stream.on('error', reject);
      stream.write({ ID: leaseId });
    });
  } finally {
    stream.end();
  }
}

/** Creates `key` = holder under the lease only if nobody has it; its create revision, or null. */
async function createIfAbsent(client: Etcd3, key: string, holder: string, leaseId: string): Promise<bigint | null> {
  const result = await client.kv.txn({
    compare: [{ key: bytes(key), target: 'Create', result: 'Equal', create_revision: 0 }],
    success: [{ request_put: { key: bytes(key), value: bytes(holder), lease: leaseId } }],
    failure: [],
  });
  // The transaction wrote exactly one key, so the revision it produced is that key's create revision.
  return result.succeeded ? BigInt(result.header.revision) : null;
}

async function keyRevision(client: Etcd3, key: string, serializable = false): Promise<{ createRevision: bigint; lease: string; value: string } | null> {
  const { kvs } = await client.kv.range({ key: bytes(key), serializable });
  const kv = kvs[0];
  return kv ? { createRevision: BigInt(kv.create_revision), lease: String(kv.lease), value: kv.value.toString() } : null;
}

/** Deletes `key` only if it is still the one we created, and still names us. */
async function deleteIfOurs(client: Etcd3, key: string, holder: string, createRevision: bigint): Promise<boolean> {
  const result = await client.kv.txn({
    compare: [
      { key: bytes(key), target: 'Create', result: 'Equal', create_revision: createRevision.toString() },
      { key: bytes(key), target: 'Value', result: 'Equal', value: bytes(holder) },
    ],
    success: [{ request_delete_range: { key: bytes(key) } }],
    failure: [],
  });
  return result.succeeded;
}

/** Checks that `key` is still the one we created, naming us, then keeps its lease alive. */
async function renewKey(client: Etcd3, key: string, holder: string, grant: Grant) {
  if (!grant.ref) throw new LeaseLostError(key, 'the grant carries no etcd lease id');
  // Check before the keepalive: a grant that is not ours must not extend anyone's lease.
  const current = await keyRevision(client, key);
  if (!current || current.createRevision !== grant.token || current.value !== holder || current.lease !== grant.ref) {
    throw new LeaseLostError(key, 'the key was deleted, or belongs to another grant');
  }
  const ttl = await keepAliveOnce(client, grant.ref);
  if (ttl <= 0) throw new LeaseLostError(key, `etcd lease ${grant.ref} has expired or was revoked`);
}

// ------------------------------------------------------------------ single keys

async function acquire(etcd: Etcd, key: string, holder: string, ttlMs: number, callOptions?: CallOptions): Promise<Grant | null> {
  return call(etcd, 'acquire', callOptions, async () => {
    // 1. A lease of our own; 2. the key, created only if absent, attached to it.
    const leaseId = await grantLease(etcd.client, ttlMs);
    let token: bigint | null = null;
    try {
      token = await createIfAbsent(etcd.client, key, holder, leaseId);
    } finally {
      // 3. Someone else has the key (or we failed): give the lease back at once.
      if (token === null) await revoke(etcd.client, leaseId);
    }
    return token === null ? null : { token, ref: leaseId };
  });
}

async function renew(etcd: Etcd, key: string, holder: string, grant: Grant, callOptions?: CallOptions): Promise<void> {
  await call(etcd, 'renew', callOptions, () => renewKey(etcd.client, key, holder, grant));
}

async function release(etcd: Etcd, key: string, holder: string, grant: Grant, callOptions?: CallOptions): Promise<boolean> {
  return call(etcd, 'release', callOptions, async () => {
    // 1. A read proves the key is still our grant: a forged grant could name someone
    //    else's lease id, so nothing is revoked before that. A serializable read (no Raft
    //    round) is enough: whatever it misses, revoking can only ever end *our* lease.
    const current = await keyRevision(etcd.client, key, true);
    if (!current || current.createRevision !== grant.token || current.value !== holder || current.lease !== grant.ref) return false;
    // 2. Revoking our lease deletes the key attached to it, in the same write. While the
    //    lease lives nobody else can have re-created the key, so this deletes only ours.
    try {
      await etcd.client.leaseClient.leaseRevoke({ ID: grant.ref! });
      return true;
    } catch (error) {
      // The lease ran out between the read and the revoke: it was not ours any more.
      if (error instanceof EtcdLeaseInvalidError) return false;
      throw error;
    }
  });
}

async function inspect(etcd: Etcd, key: string, callOptions?: CallOptions): Promise<LeaseInfo | null> {
  return call(etcd, 'inspect', callOptions, async () => {
    const current = await keyRevision(etcd.client, key);
    if (!current) return null;
    let remainingMs: number | null = null;
    if (current.lease !== '0') {
      const { TTL } = await etcd.client.leaseClient.leaseTimeToLive({ ID: current.lease });
      remainingMs = Math.max(0, Number(TTL)) * 1000;
    }
    return { key, holder: current.value, token: current.createRevision, remainingMs };
  });
}

// ------------------------------------------------------------------ elections

/** One candidate in an election on `prefix`, and its place in the queue while it has one. */
type Campaign = {
  etcd: Etcd;
  prefix: string;
  keyPrefix: string;
  holder: string;
  ttlMs: number;
  candidate: { leaseId: string; key: string; createRevision: bigint } | null;
};

function campaign(etcd: Etcd, prefix: string, holder: string, ttlMs: number): Candidacy {
  const c: Campaign = { etcd, prefix, keyPrefix: `${prefix}/`, holder, ttlMs, candidate: null };
  return {
    tryLead: (callOptions) => tryLead(c, callOptions),
    renew: (grant, callOptions) => renewLeadership(c, grant, callOptions),
    resign: (_grant, callOptions) => resign(c, callOptions),
  };
}

async function tryLead(c: Campaign, callOptions?: CallOptions): Promise<Grant | null> {
  return call(c.etcd, 'campaign', callOptions, async () => {
    const client = c.etcd.client;
    // 1. Join the queue once (etcd's layout: P/<lease id in hex>), or keep our place alive.
    if (c.candidate) {
      if ((await keepAliveOnce(client, c.candidate.leaseId)) <= 0) c.candidate = null; // our place lapsed: queue again
    }
    if (!c.candidate) {
      const leaseId = await grantLease(client, c.ttlMs);
      const key = `${c.keyPrefix}${BigInt(leaseId).toString(16)}`;
      const createRevision = await createIfAbsent(client, key, c.holder, leaseId);
      if (createRevision === null) {
        await revoke(client, leaseId);
        return null;
      }
      c.candidate = { leaseId, key, createRevision };
    }
    // 2. The leader is the candidate with the lowest create revision.
    const { kvs } = await client.kv.range({
      key: bytes(c.keyPrefix),
      range_end: prefixEnd(c.keyPrefix),
      sort_target: 'Create',
      sort_order: 'Ascend',
      limit: 1,
    });
    const first = kvs[0];
    return first && first.key.toString() === c.candidate.key ? { token: c.candidate.createRevision, ref: c.candidate.leaseId } : null;
  });
}

async function renewLeadership(c: Campaign, grant: Grant, callOptions?: CallOptions): Promise<void> {
  if (!c.candidate) throw new LeaseLostError(c.prefix, 'this candidate has left the election');
  const key = c.candidate.key;
  await call(c.etcd, 'renew', callOptions, () => renewKey(c.etcd.client, key, c.holder, grant));
}

async function resign(c: Campaign, callOptions?: CallOptions): Promise<void> {
  await call(c.etcd, 'resign', callOptions, () => leave(c));
}

async function leave(c: Campaign) {
  const leaving = c.candidate;
  c.candidate = null;
  if (!leaving) return;
  await deleteIfOurs(c.etcd.client, leaving.key, c.holder, leaving.createRevision).catch(() => {});
  await revoke(c.etcd.client, leaving.leaseId);
}
