// One of Pixly's servers, as the demo runs it: competes to be the weekly digest's scheduler
// (createLeaderElector; every scheduler write fenced with its token), holds a membership
// lease of its own, and works the queue. The embedded demo runs 18 of these in one process
// (lib/demo/fleet.ts, faults through a Gate); the full-stack demo runs each in a process of
// its own (lib/demo/stack-server.ts, faults as real signals, the Gate always open).
import { createLeaderElector, LeaseLostError, type FencedStore, type Lease, type LeaseClient, type LeaseReporter } from '../lease';
import { count, completeIfDone, currentWeek, enqueueWeek, send, startWeek, takeJobs } from './digest';
import { ServerCrashed, type Gate } from './gate';
import type { DigestSql } from './sql';
import { systemClock } from '../time/clock';

export const SCHEDULER_KEY = 'weekly-digest-scheduler';
export const SCHEDULER_TTL_MS = 6_000;
export const SLOW_SERVER = 'server-13';
const MEMBER_TTL_MS = 6_000;
const MEMBER_RENEW_MS = 2_000;
const JOBS_PER_TAKE = 4;
const JOB_VISIBILITY_MS = 8_000;
const LOST_ACK_RATE = 0.01;
const BETWEEN_WEEKS_MS = 5_000;

/** Waits `ms`, or less when `signal` aborts (it never rejects: a loop checks its signal itself). */
export const wait = (ms: number, signal?: AbortSignal) => systemClock.sleep(ms, signal);

export type DigestServerOptions = {
  name: string;
  gate: Gate;
  /** A lease client on the demo's lease table (pixly.leases). */
  client: LeaseClient;
  fenced: FencedStore;
  db: DigestSql;
  /** The server's life: it stops (resigning and releasing) when this aborts. */
  signal: AbortSignal;
  /** Lost acknowledgements and the slow renewer's drift follow the faults switch. */
  faults: () => boolean;
  log: (line: string) => void;
  /** Told when this server starts and stops leading the scheduler. */
  onLeading?: (leading: boolean) => void;
  /** Where the server reports its renewals (through `client`) and what it believes of the scheduler lease. */
  reporter?: LeaseReporter;
};

/** How a server's loops report an error: a crash or the server's own stop is not one. */
type OnError = (error: unknown) => void;

/** `done` settles when the server's loops have ended after `signal` aborted (its leases resigned and released). */
export function runDigestServer(options: DigestServerOptions): { leader: () => boolean; done: Promise<void> } {
  const { name, client, signal, log } = options;
  const onError: OnError = (error: unknown) => {
    if (error instanceof ServerCrashed || signal.aborted) return;
    log(`${name}: ${(error as Error)?.message ?? String(error)}`);
  };
  const elector = createLeaderElector({
    client,
    key: SCHEDULER_KEY,
    holder: name,
    ttlMs: SCHEDULER_TTL_MS,
    renewEveryMs: 1_500,
    renewDeadlineMs: 4_000,
    onStartedLeading: (leading, token) => schedule(options, onError, leading, token),
    onStoppedLeading: () => {
      options.onLeading?.(false);
      believes(options, null, false);
    },
    onError,
  });
  const loops = [elector.run(signal), membership(options, onError), work(options, onError)].map((loop) => loop.catch(onError));
  return { leader: () => elector.isLeader(), done: Promise.all(loops).then(() => undefined) };
}

/**
 * What the scheduler's code believes, reported beside what its lease client knows: "I lead,
 * with this token, for the step I am in". A scheduler paused mid-step wakes up still
 * believing it, and Leasehold's split_brain rule sees that claim against the backend's new
 * holder while the fenced store refuses its write.
 */
const STEP_BELIEF_MS = 3_000;
function believes(options: DigestServerOptions, token: bigint | null, claims: boolean) {
  options.reporter?.claim({ key: SCHEDULER_KEY, holder: `${options.name}:${options.client.instance}`, token, claims, forMs: STEP_BELIEF_MS });
}

/** The scheduler: enqueue the week, watch it finish, start the next; every write fenced. */
async function schedule(options: DigestServerOptions, onError: OnError, leading: AbortSignal, token: bigint) {
  const { name, gate, fenced, db, signal, log } = options;
  log(`${name} leads the scheduler with token ${token}`);
  options.onLeading?.(true);
  while (!leading.aborted && !signal.aborted) {
    try {
      const week = await currentWeek(db);
      // A pause here is the classic one: the scheduler has read the state and is about to
      // write, and does not know it has lost its lease while it was stopped.
      await gate.pass();
      believes(options, token, true);
      const phase = !week.enqueued ? 'enqueue' : week.completed ? 'next' : 'watch';
      const result = await fenced.write('weekly-digest', token, `week ${week.week}: ${phase}`);
      if (result === 'rejected') {
        await count(db, week.week, 'stale_writes_rejected');
        log(`${name}: its write with token ${token} was rejected by the fenced store (a newer scheduler wrote since)`);
        return;
      }
      if (phase === 'enqueue') await enqueueWeek(db, week.week);
      else if (phase === 'watch') await completeIfDone(db, week.week);
      else if (week.completedAt && systemClock.wall() - week.completedAt.getTime() > BETWEEN_WEEKS_MS) {
        await startWeek(db, week.week + 1);
        log(`week ${week.week} done; week ${week.week + 1} starts`);
      }
    } catch (error) {
      if (error instanceof ServerCrashed) return;
      onError(error); // and try again next round, while still leading
    }
    await wait(1_000, leading);
  }
}

/** The server's own lease: renewed every 2 s, later and later on the slow server. */
async function membership(options: DigestServerOptions, onError: OnError) {
  const { name, gate, client, signal } = options;
  let lease: Lease | null = null;
  // When the renewal was meant to run: every 2 s after the last call. The slow server's drift and a pause show as lateness.
  let dueAt = 0;
  while (!signal.aborted) {
    try {
      if (!lease) lease = await client.acquire(`fleet/${name}`, { holder: name, ttlMs: MEMBER_TTL_MS });
      else lease = await client.renew(lease, { dueAt });
    } catch (error) {
      if (error instanceof ServerCrashed) return;
      if (error instanceof LeaseLostError) lease = null;
      else onError(error);
    }
    // The slow renewer drifts from every 2 s to every 5.6 s over a minute (margins from 4 s to 0.4 s), then starts again.
    const drift = name === SLOW_SERVER && options.faults() ? ((systemClock.wall() / 60_000) % 1) * 3_600 : 0;
    dueAt = systemClock.mono() + MEMBER_RENEW_MS; // lib/lease's clock: performance.now()
    await wait(MEMBER_RENEW_MS + drift, signal);
  }
  if (lease && !gate.crashed) await client.release(lease).catch(() => {});
}

/** A worker: take a few jobs, send each (about a third of a second), acknowledge. */
async function work(options: DigestServerOptions, onError: OnError) {
  const { name, gate, db, signal } = options;
  while (!signal.aborted) {
    try {
      await gate.pass();
      const jobs = await takeJobs(db, name, JOBS_PER_TAKE, JOB_VISIBILITY_MS);
      if (jobs.length === 0) {
        await wait(1_000, signal);
        continue;
      }
      for (const job of jobs) {
        await wait(250 + Math.random() * 150, signal);
        if (signal.aborted) return;
        await gate.pass();
        await send(db, name, job, !(options.faults() && Math.random() < LOST_ACK_RATE));
      }
    } catch (error) {
      // A crash ends the worker; anything else is logged and the worker goes on, as a real
      // one would (its jobs are taken again by someone after the visibility timeout).
      if (error instanceof ServerCrashed) return;
      onError(error);
      await wait(1_000, signal);
    }
  }
}
