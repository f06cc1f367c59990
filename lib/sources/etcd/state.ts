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
  readonly mirror: Map<string, IKeyValue>;
  watchLive: boolean;
  watchLiveSince: number;
  /** The watch was cut off (or ended) and no round is live again yet: said once, as a gap. */
  watchCut: boolean;
  lastFullAt: number;
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
    mirror: new Map(),
    watchLive: false,
    watchLiveSince: Infinity,
    watchCut: false,
    lastFullAt: -Infinity,
    proofReads: new DueQueue(),
    proofLoop: null,
  };
}

/** Puts a key in the mirror, or takes it out when it has no lease (any more). */
export const remember = (mirror: Map<string, IKeyValue>, kv: IKeyValue) => {
  const key = kv.key.toString('latin1');
  if (String(kv.lease ?? '0') === '0') mirror.delete(key);
  else mirror.set(key, kv);
};
