// Guarded actions on an etcd source (the contract: ../force.ts), for every layout the adapter
// reads (observe.ts): an election or mutex under a prefix P (candidates P/<lease id>, hex or
// decimal; the holder is the one with the lowest create revision) and Leasehold's single key
// K with a lease. The token is the holder key's create revision.
//
//   1. read the lease (K and P/ in one transaction) and find the holder key the person saw;
//   2. one txn: create_revision(key) == token AND value(key) == holder -> delete the key;
//      otherwise read it again (the conflict reports that read, made in the same step);
//   3. revoke the holder's etcd lease, so its session learns it lost (Go's concurrency
//      session closes; lib/lease's renew fails). A lease already gone is fine. Every other key
//      on that lease goes too: plan() lists them.
//
// The new token is the deleting txn's revision. etcd's revision only rises, so a key created
// afterwards (a new single-key grant, a new candidate) gets a higher create revision. A
// candidate that was already queued behind the forced holder keeps its own create revision:
// above the old holder's token, and maybe below the reported new token. That is enough for
// fencing: a resource that has accepted the next leader's writes rejects the old holder's,
// whose token is lower; but the new token is no minimum a resource may demand of the next
// leader. force-release does the same as force-expire: etcd cannot free a key without a new
// revision, so tokens always rise.
//
// Quarantine: the lease is held by leasehold:quarantine on a new etcd lease of the quarantine,
// rounded up to whole seconds (etcd also raises any TTL to its minimum, about 2 s: a quarantine
// is never shorter than asked). Election or mutex: the same txn puts P/<new lease id> as a
// candidate; it leads only if no candidate is queued (the txn also compares that every key
// under P/ is the holder's), since a queued candidate would lead before any new key: with one
// queued, quarantine is refused. Single key: etcd refuses a delete and a put of one key in one
// txn, so K is created again by a second txn right after (create_revision(K) == 0); if someone
// acquired K in between, the quarantine is reported as not placed.
import { EtcdLeaseInvalidError, type Etcd3, type IKeyValue, type IRequestOp, type ITxnResponse } from 'etcd3';
import type { EtcdSourceConfig } from './config';
import { SourceUnavailableError } from '../errors';
import { exactOf } from '../exact';
import { bytesOfExact, ForceConflictError, ForceNotPossibleError, isDigestForm, isExpected, QUARANTINE_HOLDER, type CheckedRequest, type CurrentState, type ForceDone, type ForcePlan } from '../force';
import { createEtcdClient, etcdProblem, targetOf } from './client';
import { candidateOf } from './observe';
import { prefixEnd } from './read';

/** The lease as it is: its holder key (the lowest candidate, or K itself) and the candidates queued behind it. */
type Found = { layout: string; kv: IKeyValue; holder: string | null; queued: IKeyValue[] };

const hex = (lease: string | number) => BigInt(String(lease)).toString(16);
const latin1 = (bytes: Buffer) => bytes.toString('latin1');
const revisionOf = (kv: IKeyValue) => BigInt(String(kv.create_revision));

// The two reads of a lease, made in one transaction (one revision): K, and everything under K/.
const readOps = (name: Buffer): IRequestOp[] => {
  const dir = Buffer.concat([name, Buffer.from('/')]);
  return [{ request_range: { key: name } }, { request_range: { key: dir, range_end: prefixEnd(dir) } }];
};

/** The holder key and queue as the adapter would judge them from those reads (observe.ts). */
function judge(name: Buffer, responses: ITxnResponse['responses'], expectedToken: string | null): Found | null {
  const [single, under] = responses.map((r) => (r.response_range?.kvs ?? []).filter((kv) => String(kv.lease) !== '0'));
  const candidates = (under ?? []).filter((kv) => candidateOf(latin1(kv.key), String(kv.lease)) === latin1(name)).sort((a, b) => (revisionOf(a) < revisionOf(b) ? -1 : 1));
  const leader = candidates[0];
  const electionFound = (): Found => ({
    layout: candidates.every((kv) => kv.value.length === 0) ? 'etcd mutex' : 'etcd election',
    kv: leader!,
    holder: leader!.value.length === 0 ? `lease ${hex(leader!.lease)}` : exactOf(leader!.value),
    queued: candidates.slice(1),
  });
  const singleFound = (kv: IKeyValue): Found => ({ layout: 'etcd single key', kv, holder: kv.value.length === 0 ? null : exactOf(kv.value), queued: [] });
  // Both under one name (an unusual keyspace): the one whose token the person saw.
  if (leader && (!single?.[0] || String(leader.create_revision) === expectedToken)) return electionFound();
  return single?.[0] ? singleFound(single[0]) : null;
}

const currentOf = (found: Found | null): CurrentState | null => (found ? { holder: found.holder, token: String(found.kv.create_revision) } : null);

/**
 * The lease name's bytes, when it lies under one of the source's prefixes. The holder is
 * compared as exact text with the one made of the value read (so even the long form, by
 * digest, can be named here); it must still be exact text.
 */
function nameOf(config: EtcdSourceConfig, { key, expectedHolder }: CheckedRequest): Buffer {
  const name = bytesOfExact(key, 'key');
  if (!isDigestForm(expectedHolder)) bytesOfExact(expectedHolder, 'holder');
  const text = latin1(name);
  if (!config.prefixes.some((prefix) => text.startsWith(prefix) || `${text}/`.startsWith(prefix))) {
    throw new ForceNotPossibleError('not_found', `source ${config.name} reads only keys under ${config.prefixes.join(', ')}: this key is not one of its leases`);
  }
  return name;
}

function quarantineCheck(request: CheckedRequest, found: Found) {
  if (request.quarantineMs !== undefined && found.queued.length > 0) {
    throw new ForceNotPossibleError(
      'not_supported',
      `${found.queued.length} candidate(s) are queued behind the holder: any of them would lead before a quarantine key (it could only be created with a later revision); force without a quarantine, or let them leave first`,
    );
  }
}

/** The compare-and-delete txn (with the quarantine candidate, for an election). */
function forceTxn(name: Buffer, found: Found, request: CheckedRequest, quarantineLease: string | null) {
  const key = found.kv.key;
  const compare: NonNullable<Parameters<Etcd3['kv']['txn']>[0]['compare']> = [
    { key, target: 'Create', result: 'Equal', create_revision: String(found.kv.create_revision) },
    { key, target: 'Value', result: 'Equal', value: found.kv.value },
  ];
  const success: IRequestOp[] = [{ request_delete_range: { key } }];
  if (quarantineLease !== null && found.layout !== 'etcd single key') {
    const dir = Buffer.concat([name, Buffer.from('/')]);
    // Nobody queued since the read: every key under P/ is at most as old as the holder's.
    compare.push({ key: dir, range_end: prefixEnd(dir), target: 'Create', result: 'Less', create_revision: (revisionOf(found.kv) + 1n).toString() });
    success.push({ request_put: { key: Buffer.concat([dir, Buffer.from(hex(quarantineLease))]), value: Buffer.from(QUARANTINE_HOLDER), lease: quarantineLease } });
  }
  return { compare, success, failure: readOps(name) };
}

function planSteps(name: Buffer, found: Found | null, request: CheckedRequest, otherKeys: string[]) {
  const key = found ? exactOf(found.kv.key) : '(no key matches the holder and token you saw)';
  const election = found !== null && found.layout !== 'etcd single key';
  const quarantine = request.quarantineMs === undefined ? null : Math.ceil(request.quarantineMs / 1000);
  const steps = [];
  if (quarantine !== null) steps.push({ what: 'grant a new etcd lease for the quarantine', statement: 'LeaseGrant(TTL)', args: [String(quarantine)] });
  steps.push({
    what: `compare the holder key's create revision and value, and delete it${quarantine !== null && election ? `, putting ${QUARANTINE_HOLDER} in the queue's first place` : ''}, in one txn; otherwise read the lease again`,
    statement: `Txn(compare: [create_revision(key) == token, value(key) == holder${quarantine !== null && election ? ', create_revision(every key under name/) < token + 1' : ''}], success: [delete key${quarantine !== null && election ? `, put name/<new lease in hex> = ${QUARANTINE_HOLDER} with the new lease` : ''}], failure: [range name, range name/])`,
    args: [key, request.expectedToken ?? '', request.expectedHolder, exactOf(name)],
  });
  steps.push({
    what: `revoke the holder's etcd lease, so its session learns it lost${otherKeys.length ? ` (its other keys go too: ${otherKeys.length})` : ''}`,
    statement: 'LeaseRevoke(ID)',
    args: [found ? hex(found.kv.lease) : '(unknown)'],
  });
  if (quarantine !== null && !election) {
    steps.push({ what: `create the key again for ${QUARANTINE_HOLDER}, if nobody did first`, statement: 'Txn(compare: [create_revision(name) == 0], success: [put name = value with the new lease])', args: [exactOf(name), QUARANTINE_HOLDER] });
  }
  return steps;
}

/** Revokes a lease; whether it was still there (a lease already gone is fine), or why the revoke failed. */
async function revoke(client: Etcd3, lease: string): Promise<'revoked' | 'already gone' | string> {
  try {
    await client.leaseClient.leaseRevoke({ ID: lease });
    return 'revoked';
  } catch (error) {
    if (error instanceof EtcdLeaseInvalidError || /lease not found/i.test(String((error as Error)?.message))) return 'already gone';
    return `not revoked: ${String((error as Error)?.message ?? error)}`;
  }
}

/** Single key: K again for the quarantine holder, only if nobody has created it since the delete. */
async function recreateForQuarantine(client: Etcd3, name: Buffer, lease: string) {
  const result = await client.kv.txn({
    compare: [{ key: name, target: 'Create', result: 'Equal', create_revision: 0 }],
    success: [{ request_put: { key: name, value: Buffer.from(QUARANTINE_HOLDER), lease } }],
    failure: [{ request_range: { key: name } }],
  });
  if (result.succeeded) return { placed: true, token: String(result.header.revision) };
  const taken = result.responses[0]?.response_range?.kvs[0];
  await revoke(client, lease);
  return { placed: false, reason: `${taken ? exactOf(taken.value) : 'someone'} acquired the key first` };
}

async function execute(client: Etcd3, name: Buffer, request: CheckedRequest): Promise<ForceDone> {
  // 1. The lease as it is, and the holder key the person saw.
  const read = await client.kv.txn({ compare: [], success: readOps(name), failure: [] });
  const found = judge(name, read.responses, request.expectedToken);
  if (!found || !isExpected(request, currentOf(found))) throw new ForceConflictError(request.key, currentOf(found));
  quarantineCheck(request, found);
  const quarantineLease = request.quarantineMs === undefined ? null : (await client.leaseClient.leaseGrant({ TTL: Math.ceil(request.quarantineMs / 1000) })).ID;
  // 2. The compare-and-delete.
  const result = await client.kv.txn(forceTxn(name, found, request, quarantineLease));
  if (!result.succeeded) {
    if (quarantineLease !== null) await revoke(client, quarantineLease);
    const now = judge(name, result.responses, request.expectedToken);
    // Still the holder the person saw: it was the queue guard that failed.
    if (now && isExpected(request, currentOf(now))) quarantineCheck(request, now);
    throw new ForceConflictError(request.key, currentOf(now));
  }
  const newToken = String(result.header.revision);
  // 3. The old holder's lease, then (single key) the quarantine key.
  const lease = await revoke(client, String(found.kv.lease));
  const quarantine =
    quarantineLease === null ? undefined : found.layout === 'etcd single key' ? await recreateForQuarantine(client, name, quarantineLease) : { placed: true, token: newToken };
  return {
    previousToken: String(found.kv.create_revision),
    newToken,
    detail: {
      layout: found.layout,
      deletedKey: exactOf(found.kv.key),
      holderLease: { id: hex(found.kv.lease), outcome: lease },
      // Queued candidates keep their create revisions: the next leader's token is above the old one, maybe below newToken.
      ...(found.queued.length ? { queued: found.queued.map((kv) => ({ key: exactOf(kv.key), token: String(kv.create_revision) })) } : {}),
      ...(quarantine ? { quarantine: { ...quarantine, holder: QUARANTINE_HOLDER, ttlSeconds: Math.ceil(request.quarantineMs! / 1000) } } : {}),
    },
  };
}

async function plan(client: Etcd3, name: Buffer, request: CheckedRequest): Promise<ForcePlan> {
  const read = await client.kv.txn({ compare: [], success: readOps(name), failure: [] });
  const found = judge(name, read.responses, request.expectedToken);
  const matchesNow = found !== null && isExpected(request, currentOf(found));
  if (found && matchesNow) quarantineCheck(request, found);
  let otherKeys: string[] = [];
  if (found) {
    const { keys } = await client.leaseClient.leaseTimeToLive({ ID: String(found.kv.lease), keys: true });
    otherKeys = (keys ?? []).filter((k) => !k.equals(found.kv.key)).map((k) => exactOf(k));
  }
  return {
    layout: found?.layout ?? 'etcd (no such lease now)',
    fenced: true,
    steps: planSteps(name, matchesNow ? found : null, request, otherKeys),
    detail: { matchesNow, current: currentOf(found), ...(found ? { holderLease: hex(found.kv.lease), otherKeysOfLease: otherKeys, queued: found.queued.length } : {}) },
  };
}

export function createEtcdForce(config: EtcdSourceConfig) {
  const client = createEtcdClient(config);
  const target = targetOf(config);
  const failed = (error: unknown): never => {
    if (error instanceof ForceConflictError || error instanceof ForceNotPossibleError || error instanceof SourceUnavailableError) throw error;
    throw new SourceUnavailableError(config.name, etcdProblem(error, target), { cause: error });
  };
  return {
    plan: async (request: CheckedRequest) => plan(client, nameOf(config, request), request).catch(failed),
    execute: async (request: CheckedRequest) => execute(client, nameOf(config, request), request).catch(failed),
    async close() {
      client.close();
    },
  };
}
