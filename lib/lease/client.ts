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
import type { CallOptions, Candidacy, Grant, Lease, LeaseBackend, LeaseInfo } from './types';

export type LeaseClientOptions =
  | ({ backend: 'postgres' } & PostgresLeaseOptions)
  | ({ backend: 'redis' } & RedisLeaseOptions)
  | ({ backend: 'etcd' } & EtcdLeaseOptions);

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
  /** The same lease with a new expiry. LeaseLostError when it is no longer ours. */
  renew(lease: Lease, options?: CallOptions): Promise<Lease>;
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

export function createLeaseClient(options: LeaseClientOptions | { backend: LeaseBackend }): LeaseClient {
  const backend = typeof options.backend === 'object' ? options.backend : createBackend(options as LeaseClientOptions);
  const instance = randomBytes(4).toString('hex');
  const recordedHolder = (holder: string) => {
    if (holder.length === 0 || holder.length > 180) throw new RangeError('a holder name has 1 to 180 characters');
    return `${holder}:${instance}`;
  };
  const checkTtl = (ttlMs: number) => {
    if (!Number.isFinite(ttlMs) || ttlMs < backend.minTtlMs) {
      throw new RangeError(`ttlMs must be at least ${backend.minTtlMs} ms for ${backend.kind}; got ${ttlMs}`);
    }
  };
  const leaseFrom = (key: string, holder: string, ttlMs: number, grant: Grant, sentAt: number, sentAtWall: number): Lease => {
    const validMs = ttlMs - backend.driftAllowanceMs(ttlMs);
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
        const grant = await backend.tryAcquire(key, recorded, ttlMs, { signal });
        if (grant) return leaseFrom(key, recorded, ttlMs, grant, sentAt, sentAtWall);
        const left = giveUpAt - monotonicNow();
        if (left <= 0) return null;
        await sleep(Math.min(left, retryEveryMs * (0.5 + Math.random())), signal);
      }
    },

    async renew(lease, options) {
      const sentAt = monotonicNow();
      const sentAtWall = Date.now();
      await backend.renew(lease.key, lease.holder, lease, lease.ttlMs, options);
      return leaseFrom(lease.key, lease.holder, lease.ttlMs, lease, sentAt, sentAtWall);
    },

    release(lease, options) {
      return backend.release(lease.key, lease.holder, lease, options);
    },

    inspect(key, options) {
      return backend.inspect(key, options);
    },

    campaign(key, { holder, ttlMs }) {
      checkTtl(ttlMs);
      const recorded = recordedHolder(holder);
      return backend.campaign ? backend.campaign(key, recorded, ttlMs) : genericCandidacy(backend, key, recorded, ttlMs);
    },

    close() {
      return backend.close();
    },
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
