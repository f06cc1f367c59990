// Reading Curator's locks and latches: each configured path and the znodes below it (to a
// bounded depth and count) are walked; a znode whose children are Curator lock or latch nodes
// is a lease, read as its holder (the lowest sequence) and the candidates queued behind it.
// Every children read sets the source's one watcher, so a change under a lease comes back as
// a hint for that lease, and a change above them as a hint to read everything.
import type { Client } from 'node-zookeeper-client';
import { MAX_CANDIDATES, type Observation } from '../../domain/observe';
import { QUARANTINE_HOLDER } from '../../domain/quarantine';
import { exactOf } from '../exact';
import type { Progress, UnreadScope } from '../types';
import { childrenOf, dataOf, watchCreation, type NodeData, type Watcher } from './client';
import { curatorQueue, sessionOf, zxidOf, type CuratorNode, type CuratorRecipe } from './curator';

/** How deep below a configured path leases are looked for ("/locks" finds "/locks/app/digest"). */
export const MAX_DEPTH = 4;
/** The most znodes one full read visits under one configured path; past it, the path is reported unread. */
export const MAX_VISITED = 20_000;
/** How many children reads are in flight at once (one connection pipelines them). */
const IN_FLIGHT = 256;
/** What a recipe is called in a lease's detail. */
const RECIPE_NAMES: Record<CuratorRecipe, string> = { lock: 'InterProcessMutex or LeaderSelector', latch: 'LeaderLatch' };

export const joinPath = (parent: string, child: string) => (parent === '/' ? `/${child}` : `${parent}/${child}`);

/** How many nodes' data one read fetches at once: a node may hold 1 MB, and a read may meet thousands. */
const DATA_IN_FLIGHT = 32;

type Limit = <T>(work: () => Promise<T>) => Promise<T>;
type Reader = {
  client: Client;
  signal: AbortSignal;
  watcher: Watcher;
  progress?: Progress;
  limit?: Limit;
  /** Told of every quarantine node found holding a lease (quarantine.ts), so that it can be ended on time. */
  onQuarantine?: (nodePath: string, untilMs: number, version: number) => void;
};

/** At most `slots` of the works given run at once; the others wait their turn, in order. */
export function limiter(slots = DATA_IN_FLIGHT): Limit {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (work) => {
    if (running >= slots) await new Promise<void>((resolve) => waiting.push(resolve));
    running++;
    try {
      return await work();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}

/**
 * The children of `path`, watched; a path that is not there (a configured path nobody made yet,
 * or a lock whose emptied container parent ZooKeeper reaped) is watched for its creation instead,
 * and read after all if it was made meanwhile.
 */
export async function watchedChildren(reader: Reader, path: string): Promise<string[] | null> {
  const children = await childrenOf(reader.client, path, reader.signal, reader.watcher);
  if (children !== null) return children;
  if (!(await watchCreation(reader.client, path, reader.signal, reader.watcher))) return null;
  return childrenOf(reader.client, path, reader.signal, reader.watcher);
}

/** Who holds a node: its data as exact text and the session that owns it. */
function holderOf(node: CuratorNode, read: NodeData): string {
  const session = sessionOf(read.stat.ephemeralOwner);
  const text = read.data.length > 0 ? exactOf(read.data) : null;
  if (session === null) return text ?? node.name;
  return text === null ? `session ${session}` : `${text} (session ${session})`;
}

/** The lease at `path`, from its children (already read), or undefined when every Curator node went meanwhile. */
export async function leaseAt(reader: Reader, path: string, children: readonly string[]): Promise<Observation | undefined> {
  const queue = curatorQueue(children);
  if (!queue) return undefined;
  const first = queue.nodes.slice(0, MAX_CANDIDATES + 1);
  const limit = reader.limit ?? limiter();
  const reads = await Promise.all(first.map((node) => limit(() => dataOf(reader.client, joinPath(path, node.name), reader.signal))));
  const present = first.flatMap((node, i) => (reads[i] ? [{ node, read: reads[i]! }] : []));
  const [head, ...rest] = present;
  if (!head) return undefined;
  const until = head.node.quarantineUntilMs;
  if (until !== undefined) reader.onQuarantine?.(joinPath(path, head.node.name), until, head.read.stat.version);
  return {
    key: exactOf(path),
    kind: queue.recipe === 'latch' ? 'election' : 'lock',
    // Leasehold's quarantine holds no token: the next holder's czxid is compared with the forced holder's.
    holder: until === undefined ? holderOf(head.node, head.read) : QUARANTINE_HOLDER,
    token: until === undefined ? zxidOf(head.read.stat.czxid) : null,
    // An ephemeral node lasts as long as its session: ZooKeeper keeps no expiry on the node.
    ttlMs: null,
    remainingMs: null,
    candidates: rest.map(({ node, read }) => ({ holder: holderOf(node, read), token: zxidOf(read.stat.czxid) })),
    detail: {
      recipe: RECIPE_NAMES[queue.recipe],
      node: head.node.name,
      session: sessionOf(head.read.stat.ephemeralOwner),
      sequence: head.node.sequence,
      waiting: queue.nodes.length - 1,
      ...(until !== undefined ? { quarantineUntil: new Date(until).toISOString() } : {}),
      ...(queue.others > 0 ? { otherChildren: queue.others } : {}),
    },
  };
}

const tooMany = (root: string): UnreadScope => ({ prefix: exactOf(root), reason: `more than ${MAX_VISITED} znodes under ${root}: configure the paths of the locks themselves` });

/** Every lease under `root` (to MAX_DEPTH, MAX_VISITED znodes), with the paths they are at. */
export async function leasesUnder(reader: Reader, root: string): Promise<{ leases: { path: string; observation: Observation }[]; unread?: UnreadScope }> {
  const leases: { path: string; observation: Observation }[] = [];
  let frontier = [root];
  let visited = 0;
  for (let depth = 0; frontier.length > 0; depth++) {
    const next: string[] = [];
    for (let i = 0; i < frontier.length; i += IN_FLIGHT) {
      const batch = frontier.slice(i, i + IN_FLIGHT);
      visited += batch.length;
      if (visited > MAX_VISITED) return { leases, unread: tooMany(root) };
      let overflow = false;
      await Promise.all(
        batch.map(async (path) => {
          // Only a configured path is watched for its creation: a znode below it that goes is seen by its parent's watch.
          const children = path === root ? await watchedChildren(reader, path) : await childrenOf(reader.client, path, reader.signal, reader.watcher);
          if (children === null) return;
          const observation = await leaseAt(reader, path, children);
          if (observation) leases.push({ path, observation });
          else if (depth < MAX_DEPTH && !curatorQueue(children)) {
            for (const child of children) {
              if (visited + next.length >= MAX_VISITED) {
                overflow = true;
                break;
              }
              next.push(joinPath(path, child));
            }
          }
        }),
      );
      if (overflow) return { leases, unread: tooMany(root) };
      reader.progress?.();
    }
    frontier = next;
  }
  return { leases };
}
