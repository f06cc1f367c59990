// Guarded actions on a ZooKeeper source (the contract: ../force.ts), for Curator's locks and
// latches (read.ts): the holder is the lock node with the lowest sequence, its token the
// node's czxid.
//
//   1. read the lease's children and the holder node's data and stat, as read.ts does;
//   2. unless that is the holder and czxid the person saw: ForceConflictError with what is there;
//   3. delete the holder node with the data version just read, in a multi-op that first checks
//      the node's version: another node, or this one changed since, is not deleted.
//
// The next candidate in line then holds it (Curator's waiters watch their predecessor), with
// its own, higher czxid: ZooKeeper's zxid only rises across the ensemble, and every candidate
// queued behind the holder was created after it. The new token reported is that czxid, or with
// nobody queued the delete's zxid (the parent's pzxid after it), below every node created
// afterwards; none with a quarantine, which holds no token. force-expire and force-release do the same: ZooKeeper cannot free a lock without a new
// zxid. A Curator holder does not notice on its own until its session or its next check: its
// writes must be fenced by czxid (docs/admin-actions.md).
//
// Quarantine: the same multi-op creates Leasehold's quarantine node (quarantine.ts), which
// Curator sorts before every candidate, so the lock stays held by leasehold:quarantine until
// the ZooKeeper source observing it deletes it at its end; then the next candidate holds it.
import type { Client } from 'node-zookeeper-client';
import zookeeper from 'node-zookeeper-client';
import { SourceUnavailableError } from '../errors';
import { exactOf } from '../exact';
import { bytesOfExact, ForceConflictError, ForceNotPossibleError, isExpected, QUARANTINE_HOLDER, type CheckedRequest, type CurrentState, type ForceDone, type ForcePlan } from '../force';
import type { ZookeeperSourceConfig } from './config';
import { childrenOf, commit, createZkConnection, dataOf, deleteAtVersion, targetOf, zookeeperProblem, type NodeData } from './client';
import { systemClock } from '../../time/clock';
import { curatorQueue, quarantineName, zxidOf, type CuratorRecipe } from './curator';
import { joinPath, leaseAt } from './read';

type Found = { observation: NonNullable<Awaited<ReturnType<typeof leaseAt>>>; node: string; read: NodeData };

const noWatch = () => {};
/** The quarantine node's ACL: anyone may read it; nobody may change it or add a child, which would keep it from being deleted. */
const READ_ONLY = [new zookeeper.ACL(zookeeper.Permission.READ, new zookeeper.Id('world', 'anyone'))];
const NOT_NOTICED = 'The Curator holder does not notice on its own until its session ends or it next checks the lock: fence its writes by czxid.';

function pathOf(config: ZookeeperSourceConfig, request: CheckedRequest): string {
  const path = bytesOfExact(request.key, 'key').toString('utf8');
  const inScope = config.paths.some((root) => root === '/' || path === root || path.startsWith(`${root}/`));
  if (!inScope) throw new ForceNotPossibleError('not_found', `source ${config.name} observes only ${config.paths.join(', ')}: this lease is not one of its`);
  return path;
}

async function find(client: Client, path: string, signal: AbortSignal): Promise<Found | null> {
  const children = await childrenOf(client, path, signal);
  if (children === null) return null;
  const observation = await leaseAt({ client, signal, watcher: noWatch }, path, children);
  const node = observation ? (observation.detail?.node as string) : null;
  const read = node ? await dataOf(client, joinPath(path, node), signal) : null;
  return observation && node && read ? { observation, node, read } : null;
}

function stepOf(path: string, found: Found, request: CheckedRequest): ForcePlan['steps'][number] {
  const node = exactOf(joinPath(path, found.node));
  const version = String(found.read.stat.version);
  const quarantine = quarantinePath(path, found, request, systemClock.wall());
  if (!quarantine) return { what: `delete the holder's node if it is still the one you saw (version ${version}). ${NOT_NOTICED}`, statement: 'multi(check(node, version), delete(node, version))', args: [node, version] };
  return {
    what: `delete the holder's node if it is still the one you saw (version ${version}), and create ${QUARANTINE_HOLDER}'s node, which Curator sorts before every candidate, for ${request.quarantineMs} ms: Leasehold deletes it then and the next in line holds the lock. ${NOT_NOTICED}`,
    statement: 'multi(check(node, version), delete(node, version), create(quarantine node, persistent))',
    args: [node, version, exactOf(quarantine)],
  };
}

const currentOf = (found: Found | null): CurrentState | null =>
  found ? { holder: found.observation.holder, token: found.observation.token === null ? null : found.observation.token.toString() } : null;

const recipeOf = (found: Found): CuratorRecipe => (found.observation.kind === 'election' ? 'latch' : 'lock');

/** The quarantine node's path, for a quarantine asked of `found` (null: none asked). */
const quarantinePath = (path: string, found: Found, request: CheckedRequest, now: number) =>
  request.quarantineMs === undefined ? null : joinPath(path, quarantineName(recipeOf(found), now + request.quarantineMs));

async function execute(client: Client, path: string, request: CheckedRequest, signal: AbortSignal): Promise<ForceDone> {
  const found = await find(client, path, signal);
  if (!found || !isExpected(request, currentOf(found))) throw new ForceConflictError(request.key, currentOf(found));
  const nodePath = joinPath(path, found.node);
  const now = systemClock.wall();
  const quarantine = quarantinePath(path, found, request, now);
  try {
    const transaction = deleteAtVersion(client, nodePath, found.read.stat.version);
    if (quarantine) transaction.create(quarantine, Buffer.from(QUARANTINE_HOLDER), READ_ONLY, zookeeper.CreateMode.PERSISTENT);
    await commit(transaction, signal, `deleting ${nodePath}`);
  } catch (error) {
    const code = (error as { code?: number } | null)?.code;
    if (code === zookeeper.Exception.NO_NODE || code === zookeeper.Exception.BAD_VERSION) {
      throw new ForceConflictError(request.key, currentOf(await find(client, path, signal)), 'the holder\'s node went or changed before it could be deleted');
    }
    throw error;
  }
  // The next holder's czxid (above the old one: it was queued behind it); with nobody queued,
  // the parent's pzxid, the zxid of the delete, below every node created afterwards. A
  // quarantine holds no token: the next holder's is compared with the forced holder's.
  const parent = quarantine ? null : await dataOf(client, path, signal);
  const next = await find(client, path, signal);
  const nextToken = next?.observation.token ?? null;
  return {
    previousToken: request.expectedToken,
    newToken: quarantine ? null : (nextToken ?? zxidOf(parent?.stat.pzxid))?.toString() ?? null,
    detail: {
      deleted: exactOf(nodePath),
      session: found.observation.detail?.session ?? null,
      nextHolder: next?.observation.holder ?? null,
      nextToken: next?.observation.token?.toString() ?? null,
      ...(quarantine ? { quarantine: { node: exactOf(quarantine), holder: QUARANTINE_HOLDER, until: new Date(now + request.quarantineMs!).toISOString() } } : {}),
    },
  };
}

async function plan(client: Client, path: string, request: CheckedRequest, signal: AbortSignal): Promise<ForcePlan> {
  const found = await find(client, path, signal);
  const children = found ? ((await childrenOf(client, path, signal)) ?? []) : [];
  const queue = curatorQueue(children);
  return {
    layout: found?.observation.kind === 'election' ? 'Curator LeaderLatch' : 'Curator lock',
    fenced: true,
    steps: found ? [stepOf(path, found, request)] : [],
    detail: {
      matchesWhatYouSaw: isExpected(request, currentOf(found)),
      node: found ? exactOf(joinPath(path, found.node)) : null,
      session: found?.observation.detail?.session ?? null,
      nextInLine: found?.observation.candidates[0]?.holder ?? null,
      queued: queue ? queue.nodes.length - 1 : 0,
      note: NOT_NOTICED,
    },
  };
}

export function createZookeeperForce(config: ZookeeperSourceConfig) {
  const connection = createZkConnection(config);
  const failed = (error: unknown): never => {
    if (error instanceof ForceConflictError || error instanceof ForceNotPossibleError || error instanceof SourceUnavailableError) throw error;
    throw new SourceUnavailableError(config.name, zookeeperProblem(error, targetOf(config)), { cause: error });
  };
  const run = async <T>(signal: AbortSignal, work: (client: Client) => Promise<T>) => work(await connection.client(signal)).catch(failed);
  return {
    plan: (request: CheckedRequest, signal: AbortSignal) => run(signal, (client) => plan(client, pathOf(config, request), request, signal)),
    execute: (request: CheckedRequest, signal: AbortSignal) => run(signal, (client) => execute(client, pathOf(config, request), request, signal)),
    async close() {
      connection.close();
    },
  };
}
