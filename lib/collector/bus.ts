// In-process publish/subscribe between the collector and the API's live stream. One bus per
// process, on globalThis (Next gives route handlers and instrumentation separate module copies).
import { EventEmitter } from 'node:events';
import type { LeaseEventView, LeaseView } from '../domain/types';

export type SourceView = {
  name: string;
  backend: string;
  status: 'up' | 'down' | 'unknown';
  lastGoodReadAt: string | null;
  lastError: string | null;
  lastPollMs: number | null;
};

export type BusMessage =
  | { type: 'lease'; lease: LeaseView }
  | { type: 'event'; event: LeaseEventView }
  | { type: 'source'; source: SourceView };

const state = globalThis as typeof globalThis & { __leaseholdBus?: EventEmitter };

function bus(): EventEmitter {
  if (!state.__leaseholdBus) {
    state.__leaseholdBus = new EventEmitter();
    // Every open stream is a listener; there is no meaningful limit to warn about.
    state.__leaseholdBus.setMaxListeners(0);
  }
  return state.__leaseholdBus;
}

export function publish(message: BusMessage) {
  bus().emit('message', message);
}

/** Subscribes; returns the function that unsubscribes. */
export function subscribe(listener: (message: BusMessage) => void): () => void {
  bus().on('message', listener);
  return () => bus().off('message', listener);
}
