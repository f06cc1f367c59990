// The lease client: one API over every backend.
//
//   const client = createLeaseClient({ backend: 'redis', urls: ['redis://127.0.0.1:6379'] })
//   const lease = await client.acquire('lock:weekly-digest', { holder: 'worker-7', ttlMs: 30_000 })
//   if (lease) { ...write with lease.token...; await client.renew(lease); await client.release(lease) }
import { randomBytes } from 'node:crypto';
import { monotonicNow, sleep, throwIfAborted } from './deadline';
import { LeaseLostError } from './errors';
import { createEtcdBackend, type EtcdLeaseOptions } from './etcd';
import { createPostgresBackend, type PostgresLeaseOptions } from './postgres';
import { createRedisBackend, type RedisLeaseOptions } from './redis';
import { outcomeOf, timingFanout, type LeaseCall, type LeaseCallOutcome, type LeaseTimingListener } from './timings';
import type { CallOptions, Candidacy, Grant, Lease, LeaseBackend, LeaseInfo, RenewOptions } from './types';

/** What every client takes, whatever its backend. */
export type LeaseClientCommonOptions = {
  /**
   * Told of every acquire, renew and release: its round trip, its lateness, its outcome and
   * what the holder believes afterwards (timings.ts). leaseMetrics() and createLeaseReporter()
   * are listeners; so is any function. A listener that throws never breaks a call.
   */
  onTiming?: LeaseTimingListener | readonly LeaseTimingListener[];
};

export type LeaseClientOptions = LeaseClientCommonOptions &
  (({ backend: 'postgres' } & PostgresLeaseOptions) | ({ backend: 'redis' } & RedisLeaseOptions) | ({ backend: 'etcd' } & EtcdLeaseOptions));

export type AcquireOptions = CallOptions & {
  /** Who asks; recorded as "<holder>:<instance suffix>" so two processes with the same name never share a lease. */
  holder: string;
  ttlMs: number;
  /** Keep trying this long while someone else holds it (default 0: one attempt). */
  waitMs?: number;
  /** Pause between attempts while waiting (default 100 ms, with jitter). */
  retryEveryMs?: number;
};

export type LeaseClient = {
  readonly backend: LeaseBackend;
  /** This client instance's suffix, appended to every holder name it records. */
  readonly instance: string;
  /** The lease, or null when someone else holds it (after waitMs, if given). */
  acquire(key: string, options: AcquireOptions): Promise<Lease | null>;
  /**
   * The same lease with a new expiry. LeaseLostError when it is no longer ours. Give
   * `dueAt` (when you meant to renew, on performance.now()'s clock) to have its lateness timed.
   */
  renew(lease: Lease, options?: RenewOptions): Promise<Lease>;
  /** true when released; false when it was not ours any more. */
  release(lease: Lease, options?: CallOptions): Promise<boolean>;
  /** The current holder, token and remaining time of `key`, or null when nobody holds it. */
  inspect(key: string, options?: CallOptions): Promise<LeaseInfo | null>;
  /** A candidacy in an election on `key` (etcd: native queue; others: contend for the lease). */
  campaign(key: string, options: { holder: string; ttlMs: number }): Candidacy;
  close(): Promise<void>;
};

export function createBackend(options: LeaseClientOptions): LeaseBackend {
  switch (options.backend) {
    case 'postgres':
      return createPostgresBackend(options);
    case 'redis':
      return createRedisBackend(options);
    case 'etcd':
      return createEtcdBackend(options);
  }
}

export function createLeaseClient(options: LeaseClientOptions | ({ backend: LeaseBackend } & LeaseClientCommonOptions)): LeaseClient {
  const backend = typeof options.backend === 'object' ? options.backend : createBackend(options as LeaseClientOptions);
  const instance = randomBytes(4).toString('hex');
  const timed = timer(backend, options.onTiming);
  const recordedHolder = (holder: string) => {
    if (holder.length === 0 || holder.length > 180) throw new RangeError('a holder name has 1 to 180 characters');
    return `${holder}:${instance}`;
  };
  const checkTtl = (ttlMs: number) => {
    if (!Number.isFinite(ttlMs) || ttlMs < backend.minTtlMs) {
      throw new RangeError(`ttlMs must be at least ${backend.minTtlMs} ms for ${backend.kind}; got ${ttlMs}`);
    }
  };
  const validMsOf = (ttlMs: number) => ttlMs - backend.driftAllowanceMs(ttlMs);
  const leaseFrom = (key: string, holder: string, ttlMs: number, grant: Grant, sentAt: number, sentAtWall: number): Lease => {
    const validMs = validMsOf(ttlMs);
    const lease: Lease = { key, holder, token: grant.token, ttlMs, expiresAt: new Date(sentAtWall + validMs), validUntil: sentAt + validMs };
    if (grant.ref !== undefined) lease.ref = grant.ref;
    return lease;
  };

  return {
    backend,
    instance,

    async acquire(key, { holder, ttlMs, signal, waitMs = 0, retryEveryMs = 100 }) {
      checkTtl(ttlMs);
      const recorded = recordedHolder(holder);
      const giveUpAt = monotonicNow() + waitMs;
      for (;;) {
        throwIfAborted(signal);
        // Validity is measured from before the request leaves: the lease cannot have
        // started earlier than that, so a slow reply only makes us more careful.
        const sentAt = monotonicNow();
        const sentAtWall = Date.now();
        const grant = await timed(
          { call: 'acquire', key, holder: recorded, token: null, ttlMs },
          () => backend.tryAcquire(key, recorded, ttlMs, { signal }),
          (granted) => (granted ? { outcome: 'ok', token: granted.token, claimUntil: sentAt + validMsOf(ttlMs) } : { outcome: 'busy', token: null, claimUntil: null }),
        );
        if (grant) return leaseFrom(key, recorded, ttlMs, grant, sentAt, sentAtWall);
        const left = giveUpAt - monotonicNow();
        if (left <= 0) return null;
        await sleep(Math.min(left, retryEveryMs * (0.5 + Math.random())), signal);
      }
    },

    async renew(lease, options) {
      const sentAt = monotonicNow();
      const sentAtWall = Date.now();
      await timed(
        { call: 'renew', key: lease.key, holder: lease.holder, token: lease.token, ttlMs: lease.ttlMs, dueAt: options?.dueAt },
        () => backend.renew(lease.key, lease.holder, lease, lease.ttlMs, options),
        () => ({ outcome: 'ok', token: lease.token, claimUntil: sentAt + validMsOf(lease.ttlMs) }),
      );
      return leaseFrom(lease.key, lease.holder, lease.ttlMs, lease, sentAt, sentAtWall);
    },

    release(lease, options) {
      return timed(
        { call: 'release', key: lease.key, holder: lease.holder, token: lease.token, ttlMs: lease.ttlMs },
        () => backend.release(lease.key, lease.holder, lease, options),
        (released) => ({ outcome: released ? 'ok' : 'lost', token: lease.token, claimUntil: null }),
      );
    },

    inspect: (key, options) => backend.inspect(key, options),

    campaign(key, { holder, ttlMs }) {
      checkTtl(ttlMs);
      const recorded = recordedHolder(holder);
      const candidacy = backend.campaign ? backend.campaign(key, recorded, ttlMs) : genericCandidacy(backend, key, recorded, ttlMs);
      return timedCandidacy(candidacy, timed, key, recorded, ttlMs, validMsOf(ttlMs));
    },

    close: () => backend.close(),
  };
}

/** An election without a native queue: every candidate contends for the same lease. */
function genericCandidacy(backend: LeaseBackend, key: string, holder: string, ttlMs: number): Candidacy {
  return {
    tryLead: (options) => backend.tryAcquire(key, holder, ttlMs, options),
    renew: (grant, options) => backend.renew(key, holder, grant, ttlMs, options),
    async resign(grant, options) {
      if (!grant) return;
      try {
        await backend.release(key, holder, grant, options);
      } catch (error) {
        if (!(error instanceof LeaseLostError)) throw error;
      }
    },
  };
}

/** One call as the timer sees it: what was asked, and (for a renewal) when it was due. */
type TimedCall = { call: LeaseCall; key: string; holder: string; token: bigint | null; ttlMs: number; dueAt?: number };
/** What a call's answer means: its outcome, its token, and until when the holder now believes it holds (null: it does not). */
type Settled = { outcome: LeaseCallOutcome; token: bigint | null; claimUntil: number | null };
type Timed = <T>(call: TimedCall, work: () => Promise<T>, settle: (result: T) => Settled) => Promise<T>;

/** Beliefs kept past this many leases are swept of the ones that have run out. */
const BELIEFS_SWEPT_PAST = 10_000;

/**
 * Times every call and tells the listeners; with no listener it only runs the call. Keeps,
 * per holder and key, until when the holder believes it holds the lease, so that a call
 * whose outcome is unknown reports the belief it leaves unchanged.
 */
function timer(backend: LeaseBackend, onTiming: LeaseClientCommonOptions['onTiming']): Timed {
  const listeners = onTiming === undefined ? [] : typeof onTiming === 'function' ? [onTiming] : [...onTiming];
  const emit = timingFanout(listeners, (error) => console.error('[lease] an onTiming listener threw:', error));
  if (!emit) return (_call, work) => work();
  const beliefs = new Map<string, number>();
  const believe = (id: string, claimUntil: number | null) => {
    if (claimUntil === null) return void beliefs.delete(id);
    beliefs.set(id, claimUntil);
    if (beliefs.size > BELIEFS_SWEPT_PAST) {
      const now = monotonicNow();
      for (const [other, until] of beliefs) if (until < now) beliefs.delete(other);
    }
  };
  return async (call, work, settle) => {
    const id = `${call.holder}\u0000${call.key}`;
    const sentAt = monotonicNow();
    const base = {
      backend: backend.kind,
      call: call.call,
      key: call.key,
      holder: call.holder,
      ttlMs: call.ttlMs,
      at: new Date(),
      lateMs: call.dueAt === undefined ? null : Math.max(0, sentAt - call.dueAt),
    };
    let result: Awaited<ReturnType<typeof work>>;
    try {
      result = await work();
    } catch (error) {
      const outcome = outcomeOf(error);
      if (outcome === 'lost') believe(id, null);
      // Unknown is not lost: the belief stands, but only until its time runs out.
      const until = beliefs.get(id);
      const claimUntil = until !== undefined && until > monotonicNow() ? until : null;
      emit({ ...base, token: call.token, rttMs: monotonicNow() - sentAt, outcome, claims: claimUntil !== null, claimUntil, error: error instanceof Error ? error : new Error(String(error)) });
      throw error;
    }
    const settled = settle(result);
    believe(id, settled.claimUntil);
    emit({ ...base, token: settled.token, rttMs: monotonicNow() - sentAt, outcome: settled.outcome, claims: settled.claimUntil !== null, claimUntil: settled.claimUntil });
    return result;
  };
}

/** A candidacy whose calls are timed like the client's: leading is an acquire, resigning a release. */
function timedCandidacy(candidacy: Candidacy, timed: Timed, key: string, holder: string, ttlMs: number, validMs: number): Candidacy {
  return {
    tryLead(options) {
      const sentAt = monotonicNow();
      return timed({ call: 'acquire', key, holder, token: null, ttlMs }, () => candidacy.tryLead(options), (grant) =>
        grant ? { outcome: 'ok', token: grant.token, claimUntil: sentAt + validMs } : { outcome: 'busy', token: null, claimUntil: null },
      );
    },
    renew(grant, options) {
      const sentAt = monotonicNow();
      return timed({ call: 'renew', key, holder, token: grant.token, ttlMs, dueAt: options?.dueAt }, () => candidacy.renew(grant, options), () => ({
        outcome: 'ok',
        token: grant.token,
        claimUntil: sentAt + validMs,
      }));
    },
    resign(grant, options) {
      if (!grant) return candidacy.resign(grant, options);
      return timed({ call: 'release', key, holder, token: grant.token, ttlMs }, () => candidacy.resign(grant, options), () => ({
        outcome: 'ok',
        token: grant.token,
        claimUntil: null,
      }));
    },
  };
}
