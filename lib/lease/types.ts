// The shapes of the lease client library. One contract (LeaseBackend) with one
// implementation per backend; the client, the elector and the tests talk only to it.

export type BackendKind = 'postgres' | 'redis' | 'etcd';

/** A lease this client holds. */
export type Lease = {
  key: string;
  /** The holder as the backend records it: the name given to acquire, plus this client's instance suffix. */
  holder: string;
  /** The fencing token of this grant: higher than every earlier grant's. Send it with every protected write. */
  token: bigint;
  ttlMs: number;
  /** Wall-clock estimate of the expiry, for display: the moment the request was sent plus the TTL. */
  expiresAt: Date;
  /**
   * Until when, on this process's monotonic clock (performance.now()), the lease is certainly
   * still ours: measured from *before* the request was sent, so network delay only shortens it.
   */
  validUntil: number;
  /** Backend reference for later calls (the etcd lease id). */
  ref?: string;
};

/** What inspect() sees: the current holder of a key, whoever it is. */
export type LeaseInfo = {
  key: string;
  holder: string;
  /** null where the layout keeps no token (an unfenced lease). */
  token: bigint | null;
  /** Time left as the backend reports it; null when it keeps no TTL. */
  remainingMs: number | null;
};

/** One successful grant, as a backend reports it. */
export type Grant = {
  token: bigint;
  /** Backend reference for later calls (the etcd lease id). */
  ref?: string;
};

export type CallOptions = { signal?: AbortSignal };

/**
 * A renewal's options: `dueAt` is when the renewal should have been sent, on this process's
 * monotonic clock (performance.now()). Given, the client reports how late it ran (timings.ts).
 */
export type RenewOptions = CallOptions & { dueAt?: number };

/**
 * The contract every backend implements. Every call has a deadline and honours the
 * signal; failures are LeaseLostError (the backend says it is not ours), BackendUnavailableError
 * (no answer in time; nothing is known) or LeaseAbortedError (the caller cancelled).
 */
export interface LeaseBackend {
  readonly kind: BackendKind;
  /** The shortest TTL this backend can keep (etcd: 2 s). */
  readonly minTtlMs: number;
  /** How much of a TTL to give up for clock drift between the servers that keep it (Redlock); 0 elsewhere. */
  driftAllowanceMs(ttlMs: number): number;
  /** Grants `key` to `holder` when it is free or expired; null when someone else holds it. */
  tryAcquire(key: string, holder: string, ttlMs: number, options?: CallOptions): Promise<Grant | null>;
  /** Extends our grant to ttlMs from now; LeaseLostError when it is no longer ours (expired, released, taken, forced). */
  renew(key: string, holder: string, grant: Grant, ttlMs: number, options?: CallOptions): Promise<void>;
  /** Ends our grant; false when it was not ours any more (nothing is changed then). */
  release(key: string, holder: string, grant: Grant, options?: CallOptions): Promise<boolean>;
  /** The current holder of `key`, or null when nobody holds it. */
  inspect(key: string, options?: CallOptions): Promise<LeaseInfo | null>;
  /**
   * Backends with native elections (etcd's concurrency layout) return a candidacy that
   * queues behind earlier candidates; the others are wrapped by genericCandidacy().
   */
  campaign?(key: string, holder: string, ttlMs: number): Candidacy;
  close(): Promise<void>;
}

/** One candidate in an election on `key`. */
export interface Candidacy {
  /** Leads when this candidate is first; null while others are ahead. Keeps the candidacy alive. */
  tryLead(options?: CallOptions): Promise<Grant | null>;
  /** Extends the leadership grant; LeaseLostError when it is gone. */
  renew(grant: Grant, options?: RenewOptions): Promise<void>;
  /** Leaves the election (and gives up leadership if held). Never throws for a lost lease. */
  resign(grant: Grant | null, options?: CallOptions): Promise<void>;
}
