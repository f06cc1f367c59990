// Leader election on top of a lease, after client-go's tools/leaderelection:
//
// - ttlMs (lease duration) > renewDeadlineMs > 1.2 × renewEveryMs (retry period).
// - A leader that cannot renew within renewDeadlineMs of its last successful renewal stops
//   leading: it aborts the leader's signal and calls onStoppedLeading. Because the renew
//   deadline is shorter than the TTL, and both are measured on this process's monotonic
//   clock from *before* the request was sent, that happens before the lease can expire on
//   the backend. (A process paused longer than that cannot stop itself in time; the
//   fencing token is what protects the resource then.)
// - It never reports leading without a token: onStartedLeading receives the grant's token,
//   to be sent with every protected write.
import { LeaseAbortedError, LeaseLostError } from './errors';
import { linkedTimeout, monotonicNow, sleep } from './deadline';
import type { LeaseClient } from './client';
import type { Candidacy, Grant } from './types';

export type LeaderElectorOptions = {
  client: LeaseClient;
  /** The lease key (Postgres, Redis) or election prefix without a trailing slash (etcd). */
  key: string;
  holder: string;
  ttlMs: number;
  /** How often the leader renews, and how often a follower tries to take over. */
  renewEveryMs: number;
  /** Give up leading when no renewal has succeeded for this long (default: two thirds of ttlMs). */
  renewDeadlineMs?: number;
  /** Called when this candidate becomes leader. `signal` aborts the moment it stops leading. */
  onStartedLeading: (signal: AbortSignal, token: bigint) => void | Promise<void>;
  /** Called once each time it stops leading, before the lease could have expired (see above). */
  onStoppedLeading?: () => void;
  /** Errors that do not stop the elector: a failed renewal attempt, a throwing callback. */
  onError?: (error: unknown) => void;
};

export type LeaderElector = {
  /** Campaigns, leads and renews until `signal` aborts; then stops leading and resigns. */
  run(signal: AbortSignal): Promise<void>;
  isLeader(): boolean;
  /** The token of the current leadership, or null when not leading. */
  token(): bigint | null;
};

export function createLeaderElector(options: LeaderElectorOptions): LeaderElector {
  const { client, key, holder, ttlMs, renewEveryMs } = options;
  const renewDeadlineMs = options.renewDeadlineMs ?? Math.floor((ttlMs * 2) / 3);
  if (!(ttlMs > renewDeadlineMs)) throw new RangeError(`ttlMs (${ttlMs}) must be greater than renewDeadlineMs (${renewDeadlineMs})`);
  if (!(renewDeadlineMs > renewEveryMs * 1.2)) {
    throw new RangeError(`renewDeadlineMs (${renewDeadlineMs}) must be greater than 1.2 × renewEveryMs (${renewEveryMs * 1.2})`);
  }
  const onError = options.onError ?? ((error: unknown) => console.error(`[lease] elector ${key}:`, error));
  const elector: Elector = { options, client, key, holder, ttlMs, renewEveryMs, renewDeadlineMs, onError, leadership: null };

  return {
    isLeader: () => elector.leadership !== null,
    token: () => elector.leadership?.grant.token ?? null,
    run: (signal) => run(elector, signal),
  };
}

/** What the elector's steps share: its options and settings, and the leadership while it leads. */
type Elector = {
  options: LeaderElectorOptions;
  client: LeaseClient;
  key: string;
  holder: string;
  ttlMs: number;
  renewEveryMs: number;
  renewDeadlineMs: number;
  onError: (error: unknown) => void;
  leadership: { grant: Grant; controller: AbortController } | null;
};

function stopLeading(elector: Elector) {
  const current = elector.leadership;
  if (!current) return;
  elector.leadership = null;
  current.controller.abort(new LeaseLostError(elector.key, 'this process stopped leading'));
  try {
    elector.options.onStoppedLeading?.();
  } catch (error) {
    elector.onError(error);
  }
}

/** Renews until the lease is lost, the renew deadline passes, or `signal` aborts. */
async function lead(elector: Elector, candidacy: Candidacy, grant: Grant, grantedAt: number, signal: AbortSignal) {
  const { renewEveryMs, renewDeadlineMs } = elector;
  let lastRenewal = grantedAt;
  // The watchdog stops leading at the renew deadline even if a renewal call is still
  // hanging or the loop below is late: it does not wait for anything to answer.
  let watchdog: NodeJS.Timeout | undefined;
  const armWatchdog = () => {
    clearTimeout(watchdog);
    watchdog = setTimeout(stopLeading, Math.max(0, lastRenewal + renewDeadlineMs - monotonicNow()), elector);
  };
  armWatchdog();
  try {
    while (elector.leadership && !signal.aborted) {
      // When this renewal is due: how late it is sent is the holder's own lateness (an
      // event-loop stall, a pause), reported to the client's timing listeners.
      const dueAt = monotonicNow() + renewEveryMs;
      await sleep(renewEveryMs, signal);
      if (!elector.leadership) return;
      const left = lastRenewal + renewDeadlineMs - monotonicNow();
      if (left <= 0) return stopLeading(elector);
      const sentAt = monotonicNow();
      const deadline = linkedTimeout(signal, Math.ceil(left));
      try {
        await candidacy.renew(grant, { signal: deadline.signal, dueAt });
        lastRenewal = sentAt;
        armWatchdog();
      } catch (error) {
        if (error instanceof LeaseLostError) return stopLeading(elector);
        if (signal.aborted) return;
        // Unknown is not lost: try again until the renew deadline (the watchdog) says otherwise.
        if (!(error instanceof LeaseAbortedError)) elector.onError(error);
      } finally {
        deadline.dispose();
      }
    }
  } catch (error) {
    if (!(error instanceof LeaseAbortedError)) throw error;
  } finally {
    clearTimeout(watchdog);
  }
}

async function run(elector: Elector, signal: AbortSignal): Promise<void> {
  const { options, client, key, holder, ttlMs, renewEveryMs, renewDeadlineMs, onError } = elector;
  const candidacy = client.campaign(key, { holder, ttlMs });
  let lastGrant: Grant | null = null;
  let work: Promise<void> = Promise.resolve();
  try {
    while (!signal.aborted) {
      // 1. Campaign: try, and try again every renewEveryMs (with jitter) until we lead.
      const sentAt = monotonicNow();
      let grant: Grant | null = null;
      try {
        grant = await candidacy.tryLead({ signal });
      } catch (error) {
        if (signal.aborted) break;
        onError(error);
      }
      if (!grant) {
        await sleep(renewEveryMs * (0.8 + Math.random() * 0.4), signal).catch(() => {});
        continue;
      }
      if (typeof grant.token !== 'bigint') throw new Error(`backend ${client.backend.kind} granted leadership without a token`);
      lastGrant = grant;

      // 2. Lead: hand the token and a signal to the work, then renew until we stop.
      const controller = new AbortController();
      elector.leadership = { grant, controller };
      work = Promise.resolve()
        .then(() => options.onStartedLeading(controller.signal, grant.token))
        .catch((error: unknown) => {
          if (!controller.signal.aborted) onError(error);
        });
      await lead(elector, candidacy, grant, sentAt, signal);
      stopLeading(elector);
    }
  } finally {
    // 3. Leaving: stop the work and let it finish (its last writes are still fenced by a
    //    lease we hold), then give the lease up so a successor need not wait a TTL.
    stopLeading(elector);
    await Promise.race([work, new Promise((resolve) => setTimeout(resolve, Math.min(renewDeadlineMs, 5_000)).unref())]);
    await candidacy.resign(lastGrant, { signal: AbortSignal.timeout(Math.min(ttlMs, 5_000)) }).catch(onError);
  }
}
