// In-process publish/subscribe between the collector and the API's live stream. One bus per
// composition root (lib/root), which hands it to the collector, the relay, streams and the lease cache.
//
// Every message gets a sequence number, and the bus remembers the last RING of them. A
// position, "<epoch>.<seq>", names a point in this process's stream of changes: the lease
// list says up to which message it is current, and a stream can resume after a position
// (the list's, or the last id an EventSource saw before it reconnected) with nothing lost
// and nothing twice. The epoch changes with the process, so positions from another process
// (a restart, another instance) are never taken for ours.
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { LeaseEventView, LeaseView } from '../domain/types';

export type SourceView = {
  name: string;
  backend: string;
  status: 'up' | 'down' | 'unknown';
  lastGoodReadAt: string | null;
  lastError: string | null;
  lastPollMs: number | null;
  /** While down: when the read that found it down began (absent when this process does not know). */
  downSince?: string | null;
};

export type BusMessage =
  | { type: 'lease'; lease: LeaseView }
  | { type: 'event'; event: LeaseEventView }
  | { type: 'source'; source: SourceView };

/** Messages remembered for resuming: a few seconds of 10,000 leases renewing. */
const RING = 10_000;

export type Listener = (message: BusMessage, seq: number) => void;

/** The bus of one composition root (lib/root): the collector publishes, streams and the lease cache subscribe. */
export type Bus = {
  publish(message: BusMessage): void;
  /** Where the bus is now: every message up to it has been delivered to every subscriber. */
  position(): string;
  /** The sequence number a position names on this bus, or null when it is not one of ours. */
  seqOf(position: string | null | undefined): number | null;
  /**
   * Subscribes; returns the function that unsubscribes. With `after` (a sequence number of this
   * bus), the messages after it are delivered first, when the bus still remembers all of them:
   * `resumed` says whether it did. Nothing can be published between the replay and the
   * subscription (one thread), so there is no gap and no repeat.
   */
  subscribe(listener: Listener, after?: number | null): { unsubscribe: () => void; resumed: boolean };
  /** Streams and caches subscribed now. */
  listeners(): number;
};

export function createBus(): Bus {
  const emitter = new EventEmitter();
  // Every open stream is a listener; there is no meaningful limit to warn about.
  emitter.setMaxListeners(0);
  const epoch = randomBytes(4).toString('hex');
  const ring: (BusMessage | undefined)[] = new Array(RING);
  let seq = 0;
  return {
    publish(message) {
      seq += 1;
      ring[seq % RING] = message;
      emitter.emit('message', message, seq);
    },
    position: () => `${epoch}.${seq}`,
    seqOf(position) {
      const match = /^([0-9a-f]{8})\.(\d{1,15})$/.exec(position ?? '');
      if (!match || match[1] !== epoch) return null;
      const named = Number(match[2]);
      return named <= seq ? named : null;
    },
    subscribe(listener, after) {
      let resumed = false;
      if (after !== undefined && after !== null && after <= seq && seq - after <= RING) {
        resumed = true;
        for (let at = after + 1; at <= seq; at++) listener(ring[at % RING]!, at);
      }
      emitter.on('message', listener);
      return { unsubscribe: () => emitter.off('message', listener), resumed };
    },
    listeners: () => emitter.listenerCount('message'),
  };
}
