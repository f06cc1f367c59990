// How Apache Curator lays out its recipes under a znode, and what Leasehold makes of them:
// - InterProcessMutex (and LeaderSelector, which is one): EPHEMERAL_SEQUENTIAL children
//   "lock-<10 digits>", or "_c_<uuid>-lock-<10 digits>" in protected mode; the lowest
//   sequence holds it; the data is the client's address, or the participant id.
// - LeaderLatch: children "latch-<10 digits>" (protected too); the lowest leads; the data is
//   the participant id.
// Curator sorts by what follows the lock name ("lock-"/"latch-"), which is the sequence.
// The token is the holder node's czxid: it rises across the whole ensemble, while the sequence
// can restart when an emptied container parent is reaped.

export type CuratorRecipe = 'lock' | 'latch';

export type CuratorNode = {
  name: string;
  recipe: CuratorRecipe;
  sequence: string;
  protectedId: string | null;
  /** Set on Leasehold's quarantine node (quarantine.ts): when it ends, in ms since the epoch. */
  quarantineUntilMs?: number;
};

const NODE = /^(?:_c_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})-)?(?:.*-)?(lock|latch)-(\d{10})$/;

const QUARANTINE = /^leasehold-quarantine-(\d{13})-(lock|latch)-$/;

/** The name of Leasehold's quarantine node (quarantine.ts) ending at `untilMs`, for a lock of `recipe`: nothing follows its lock name, so Curator sorts it first. */
export const quarantineName = (recipe: CuratorRecipe, untilMs: number) => `leasehold-quarantine-${String(Math.trunc(untilMs)).padStart(13, '0')}-${recipe}-`;

/** A child's name read as a Curator lock or latch node, or null when it is not one. */
export function curatorNode(name: string): CuratorNode | null {
  if (name.length > 200) return null;
  const quarantine = QUARANTINE.exec(name);
  if (quarantine) return { name, recipe: quarantine[2] as CuratorRecipe, sequence: '', protectedId: null, quarantineUntilMs: Number(quarantine[1]) };
  const match = NODE.exec(name);
  if (!match) return null;
  return { name, recipe: match[2] as CuratorRecipe, sequence: match[3]!, protectedId: match[1] ?? null };
}

/**
 * The children of a znode that make it a Curator lock or latch, in the order Curator serves
 * them (by sequence, then name), and how many children are not Curator's. A znode with
 * children of both recipes is read by the one with more nodes (the other is named in its
 * detail as not Curator's, so nothing is hidden).
 */
export function curatorQueue(children: readonly string[]): { recipe: CuratorRecipe; nodes: CuratorNode[]; others: number } | null {
  const locks: CuratorNode[] = [];
  const latches: CuratorNode[] = [];
  for (const child of children) {
    const node = curatorNode(child);
    if (node) (node.recipe === 'lock' ? locks : latches).push(node);
  }
  if (locks.length === 0 && latches.length === 0) return null;
  const nodes = locks.length >= latches.length ? locks : latches;
  nodes.sort((a, b) => (a.sequence === b.sequence ? (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) : a.sequence < b.sequence ? -1 : 1));
  return { recipe: nodes[0]!.recipe, nodes, others: children.length - nodes.length };
}

/** A znode's czxid (8 bytes, big-endian) as a token; null when it is not 8 bytes. */
export function zxidOf(bytes: Buffer | undefined): bigint | null {
  return bytes && bytes.length === 8 ? bytes.readBigUInt64BE(0) : null;
}

/** The session that owns an ephemeral node, as ZooKeeper's tools print it ("0x1000a3b0c0001"); null when the node is not ephemeral. */
export function sessionOf(bytes: Buffer | undefined): string | null {
  const id = zxidOf(bytes);
  return id === null || id === 0n ? null : `0x${id.toString(16)}`;
}
