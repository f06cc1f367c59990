// Time left on a lease, counted in one place: the view of the collector's lease and of the
// store's row (lease-view.ts), the lease list served from memory (lib/queries/lease-list-bytes.ts)
// and the browser's countdown (components/) all ask this. Pure: the clock is passed in.
//
// The expiry is the collector's estimate, on its own monotonic clock, written in wall-clock
// terms; `now` must be a reading of the same clock (the server's), or, in the browser, the
// browser's clock against a deadline it set itself (Date.now() + remainingMs when the lease
// arrived): two machines' clocks are never compared.

/**
 * Whether a lease counts down (has a remainingMs): held, its source readable (not stale), and
 * its expiry known.
 */
export function hasCountdown(state: string, stale: boolean, expiryKnown: boolean): boolean {
  return state === 'held' && !stale && expiryKnown;
}

/** Whole milliseconds left before `expiresAtMs` at `now` (the same clock): never below 0. */
export function remainingMsAt(expiresAtMs: number, now: number): number {
  return Math.max(0, Math.round(expiresAtMs - now));
}

/** The lease's time left at `now`, or null when it has no countdown (not held, stale, or no known expiry). */
export function remainingMsOf(lease: { state: string; stale: boolean; expiresAtMs: number | null }, now: number): number | null {
  return lease.expiresAtMs !== null && hasCountdown(lease.state, lease.stale, true) ? remainingMsAt(lease.expiresAtMs, now) : null;
}
