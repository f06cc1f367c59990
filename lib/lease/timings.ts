// Holder-side timings: what each call to the backend cost this holder, and how late it ran
// against its own schedule. The backend shows when renewals arrive; only the holder knows
// how long each one took and whether it ran when it meant to (an event-loop stall, a GC
// pause or a starved CPU shows up here first).
//
// The client reports one LeaseTiming per acquire, renew and release to every listener it
// was given (`onTiming`). Three listeners ship with the library: your own callback,
// leaseMetrics() (prom-client histograms, metrics.ts) and createLeaseReporter() (compact
// batches posted to Leasehold, reporter.ts).
import { BackendUnavailableError, LeaseAbortedError, LeaseLostError } from './errors';
import type { BackendKind } from './types';

export type LeaseCall = 'acquire' | 'renew' | 'release';

/**
 * How a call ended:
 * - ok: granted, renewed or released;
 * - busy: an acquire found someone else holding the key;
 * - lost: the backend said the lease is not ours (renew, release);
 * - unavailable: no answer in time: nothing is known;
 * - aborted: the caller cancelled;
 * - error: anything else (a bug, a refused argument).
 */
export type LeaseCallOutcome = 'ok' | 'busy' | 'lost' | 'unavailable' | 'aborted' | 'error';

export type LeaseTiming = {
  backend: BackendKind;
  call: LeaseCall;
  key: string;
  /** The holder as the backend records it (name and instance suffix). */
  holder: string;
  /** The lease's TTL as the holder asked for it, in ms. */
  ttlMs: number;
  /** The grant's fencing token; null for an acquire that was not granted. */
  token: bigint | null;
  /** Wall-clock time the request was sent. */
  at: Date;
  /** Round trip: from sending the request to its answer (or to giving up), in ms. */
  rttMs: number;
  /**
   * How late the call was sent against the moment it was due (`dueAt`), in ms; null when
   * the caller gave no due time. Never negative: early counts as 0.
   */
  lateMs: number | null;
  outcome: LeaseCallOutcome;
  /**
   * Whether this holder believes it holds the lease after the call: true after a grant or a
   * renewal; false after a release, a lost lease or a refused acquire; after an unknown
   * outcome (unavailable, aborted) it keeps what it believed before.
   */
  claims: boolean;
  /** Until when (monotonic ms, performance.now()) the holder's belief lasts without another renewal. */
  claimUntil: number | null;
  /** The failure, when the outcome is not ok or busy. */
  error?: Error;
};

export type LeaseTimingListener = (timing: LeaseTiming) => void;

export function outcomeOf(error: unknown): LeaseCallOutcome {
  if (error instanceof LeaseLostError) return 'lost';
  if (error instanceof BackendUnavailableError) return 'unavailable';
  if (error instanceof LeaseAbortedError) return 'aborted';
  return 'error';
}

/** Hands a timing to every listener; a throwing listener is reported once and never breaks the call. */
export function timingFanout(listeners: readonly LeaseTimingListener[], onListenerError: (error: unknown) => void): LeaseTimingListener | null {
  if (listeners.length === 0) return null;
  return (timing) => {
    for (const listener of listeners) {
      try {
        listener(timing);
      } catch (error) {
        onListenerError(error);
      }
    }
  };
}
