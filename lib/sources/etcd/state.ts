// What one etcd source keeps between calls, shared by its reads and its watch: the client, the
// revision the watch resumes from, values and TTLs already read, and the mirror of the keys.
import type { Etcd3, IKeyValue } from 'etcd3';
import type { EtcdSourceConfig } from './config';
import { systemClock, type Clock } from '../../time/clock';
import { silentLogger, type Logger } from '../../log';
import { DueQueue } from '../../time/due-queue';
import { createEtcdClient, targetOf } from './client';
import type { ValueMemo } from './read';
import type { TtlReading } from './ttl';

export type EtcdState = {
  readonly config: EtcdSourceConfig;
  readonly client: Etcd3;
  readonly pollMs: number;
  /** What its reads, TTL readings, watch and expiry proofs are timed on. */
  readonly clock: Clock;
  /** The source's logger (its context's; silent when none is handed). */
  readonly log: Logger;
  /** Who a failure message names ("etcd at host:port, ..."). */
  readonly target: string;
  /** The last revision seen: the watch resumes after it. */
  lastRevision: string | null;
  readonly values: ValueMemo;
  readonly ttlReadings: Map<string, TtlReading>;
  /**
   * Per lease, the earliest expiry the collector was last told (in an observation): a reading
   * of the expiry-proof loop that moves it well past this is told at once (expiry-proof.ts),
   * so that a release just after is judged against an expiry estimate no older than that.
   */
  readonly toldEnds: Map<string, number>;
  // The keys under the prefixes, kept current by full reads, targeted reads and the watch:
  // while the watch is live, a poll builds on it instead of reading every key again.
  readonly mirror: Mirror;
  watchLive: boolean;
  watchLiveSince: number;
  /** The watch was cut off (or ended) and no round is live again yet: said once, as a gap. */
  watchCut: boolean;
  lastFullAt: number;
  /** How long the last full read took (reconcileDue). */
  lastFullMs: number;
  /** Lease ids to read again to prove an expiry (expiry-proof.ts), while that loop runs. */
  readonly proofReads: DueQueue<string>;
  proofLoop: { wake: (at: number) => void } | null;
};

export function createEtcdState(config: EtcdSourceConfig, defaultPollMs: number, clock: Clock = systemClock, log: Logger = silentLogger()): EtcdState {
  return {
    config,
    log,
    client: createEtcdClient(config),
    pollMs: config.pollMs ?? defaultPollMs,
    clock,
    target: targetOf(config),
    lastRevision: null,
    values: new Map(),
    ttlReadings: new Map(),
    toldEnds: new Map(),
    mirror: new Mirror(),
    watchLive: false,
    watchLiveSince: Infinity,
    watchCut: false,
    lastFullAt: -Infinity,
    lastFullMs: 0,
    proofReads: new DueQueue(),
    proofLoop: null,
  };
}

/**
 * The keys under the prefixes by their exact text, and for each key the keys directly below
 * it (an election's candidates, `<key>/<lease id>`), so that a targeted read replaces an
 * election's candidates without looking at every key (it did: a scan of 33,000 keys per hinted
 * key, 1.6 s of a 20 s run at 100,000 leases). Keys deeper below are left to full reads.
 */
export class Mirror extends Map<string, IKeyValue> {
  private readonly below = new Map<string, Set<string>>();

  override set(key: string, kv: IKeyValue): this {
    if (!super.has(key)) {
      const parent = parentOf(key);
      if (parent !== null) {
        const children = this.below.get(parent);
        if (children) children.add(key);
        else this.below.set(parent, new Set([key]));
      }
    }
    return super.set(key, kv);
  }

  override delete(key: string): boolean {
    if (!super.delete(key)) return false;
    const parent = parentOf(key);
    const children = parent === null ? undefined : this.below.get(parent);
    if (children?.delete(key) && children.size === 0) this.below.delete(parent!);
    return true;
  }

  override clear(): void {
    super.clear();
    this.below.clear();
  }

  /** Takes out the keys directly below `key`. */
  deleteBelow(key: string): void {
    for (const child of [...(this.below.get(key) ?? [])]) this.delete(child);
  }
}

const parentOf = (key: string) => {
  const slash = key.lastIndexOf('/');
  return slash > 0 ? key.slice(0, slash) : null;
};

/** Puts a key in the mirror, or takes it out when it has no lease (any more). */
export const remember = (mirror: Mirror, kv: IKeyValue) => {
  const key = kv.key.toString('latin1');
  if (String(kv.lease ?? '0') === '0') mirror.delete(key);
  else mirror.set(key, kv);
};
