// In-process publish/subscribe between the collector and the API's live stream. One bus per
// process, on globalThis (Next gives route handlers and instrumentation separate module copies).
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

type Bus = { emitter: EventEmitter; epoch: string; seq: number; ring: (BusMessage | undefined)[] };

const state = globalThis as typeof globalThis & { __leaseholdBus?: Bus };

function bus(): Bus {
  if (!state.__leaseholdBus) {
    const emitter = new EventEmitter();
    // Every open stream is a listener; there is no meaningful limit to warn about.
    emitter.setMaxListeners(0);
    state.__leaseholdBus = { emitter, epoch: randomBytes(4).toString('hex'), seq: 0, ring: new Array(RING) };
  }
  return state.__leaseholdBus;
}

export function publish(message: BusMessage) {
  const b = bus();
  b.seq += 1;
  b.ring[b.seq % RING] = message;
  b.emitter.emit('message', message, b.seq);
}

/** Where the bus is now: every message up to it has been delivered to every subscriber. */
export function position(): string {
  const b = bus();
  return `${b.epoch}.${b.seq}`;
}

/** The sequence number a position names on this bus, or null when it is not one of ours. */
export function seqOf(position: string | null | undefined): number | null {
  const match = /^([0-9a-f]{8})\.(\d{1,15})$/.exec(position ?? '');
  if (!match || match[1] !== bus().epoch) return null;
  const seq = Number(match[2]);
  return seq <= bus().seq ? seq : null;
}

export type Listener = (message: BusMessage, seq: number) => void;

/**
 * Subscribes; returns the function that unsubscribes. With `after` (a sequence number of this
 * bus), the messages after it are delivered first, when the bus still remembers all of them:
 * `resumed` says whether it did. Nothing can be published between the replay and the
 * subscription (one thread), so there is no gap and no repeat.
 */
export function subscribe(listener: Listener, after?: number | null): { unsubscribe: () => void; resumed: boolean } {
  const b = bus();
  let resumed = false;
  if (after !== undefined && after !== null && after <= b.seq && b.seq - after <= RING) {
    resumed = true;
    for (let seq = after + 1; seq <= b.seq; seq++) listener(b.ring[seq % RING]!, seq);
  }
  b.emitter.on('message', listener);
  return { unsubscribe: () => b.emitter.off('message', listener), resumed };
}
