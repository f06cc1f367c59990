// The weekly-digest fleet: 18 simulated servers in this process, each with its own lease
// client (lib/lease, on the demo's lease table), competing to be the scheduler
// (createLeaderElector), holding a membership lease of their own, and working the queue.
// Faults, on a schedule and at random while they are on:
//   - the scheduler's server pauses for longer than its lease (a stop-the-world GC): its
//     lease expires, another server takes over with a higher token, and when the old one
//     resumes its next write carries the old token and the fenced store rejects it;
//   - a server crashes (nothing released, its jobs taken again later) and restarts;
//   - one server renews later and later (a slow renewer): its margins shrink, then recover.
import { setMaxListeners } from 'node:events';
import type { PGlite } from '@electric-sql/pglite';
import { pglitePool } from '../db/pglite-pool';
import { createBackend } from '../lease/client';
import { createFencedStore, createLeaderElector, createLeaseClient, LeaseLostError, type FencedStore, type Lease, type LeaseClient } from '../lease';
import { count, completeIfDone, currentWeek, enqueueWeek, send, setUp, startWeek, takeJobs } from './digest';
import { Gate, ServerCrashed } from './gate';

export const SCHEDULER_KEY = 'weekly-digest-scheduler';
const SCHEDULER_TTL_MS = 6_000;
const MEMBER_TTL_MS = 6_000;
const MEMBER_RENEW_MS = 2_000;
const SLOW_SERVER = 'server-13';
const JOBS_PER_TAKE = 4;
const JOB_VISIBILITY_MS = 8_000;
const LOST_ACK_RATE = 0.01;
const BETWEEN_WEEKS_MS = 5_000;

export type FleetOptions = {
  db: PGlite;
  servers?: number;
  users?: number;
  faults?: boolean;
  log?: (line: string) => void;
};

export type FaultRecord = { at: string; server: string; kind: 'pause' | 'crash' | 'restart'; detail: string };

export type Fleet = {
  readonly servers: number;
  faults(): boolean;
  setFaults(on: boolean): void;
  /** Recent faults, newest first. */
  recentFaults(): FaultRecord[];
  /** Servers down right now (crashed, not yet restarted) and paused. */
  serverStates(): { name: string; state: 'running' | 'paused' | 'crashed'; leader: boolean }[];
  stop(): Promise<void>;
};

type Server = { name: string; gate: Gate; stop: AbortController; client: LeaseClient; leader: () => boolean };

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });

export async function startFleet(options: FleetOptions): Promise<Fleet> {
  const { db } = options;
  const log = options.log ?? ((line: string) => console.log(`[leasehold] demo: ${line}`));
  const serverCount = options.servers ?? 18;
  await setUp(db, options.users ?? 3_000);
  const pool = pglitePool(db);
  const backend = createBackend({ backend: 'postgres', pool, table: 'pixly.leases', ensureTable: false });
  const fenced: FencedStore = createFencedStore({ pool, table: 'pixly.digest_fence' });
  const stopping = new AbortController();
  setMaxListeners(0, stopping.signal); // every server's signal follows it
  let faultsOn = options.faults ?? true;
  const faults: FaultRecord[] = [];
  const servers = new Map<string, Server>();
  const record = (server: string, kind: FaultRecord['kind'], detail: string) => {
    faults.unshift({ at: new Date().toISOString(), server, kind, detail });
    faults.length = Math.min(faults.length, 50);
    log(`${server}: ${detail}`);
  };
  const onError = (server: string) => (error: unknown) => {
    if (error instanceof ServerCrashed || stopping.signal.aborted) return;
    log(`${server}: ${(error as Error)?.message ?? String(error)}`);
  };

  function startServer(name: string): Server {
    const gate = new Gate(name);
    const stop = new AbortController();
    const client = createLeaseClient({ backend: gate.wrap(backend) });
    const signal = AbortSignal.any([stop.signal, stopping.signal]);
    const elector = createLeaderElector({
      client,
      key: SCHEDULER_KEY,
      holder: name,
      ttlMs: SCHEDULER_TTL_MS,
      renewEveryMs: 1_500,
      renewDeadlineMs: 4_000,
      onStartedLeading: (leading, token) => schedule(name, gate, leading, token),
      onError: onError(name),
    });
    void elector.run(signal).catch(onError(name));
    void membership(name, gate, client, signal).catch(onError(name));
    void work(name, gate, signal).catch(onError(name));
    const server = { name, gate, stop, client, leader: () => elector.isLeader() };
    servers.set(name, server);
    return server;
  }

  /** The scheduler: enqueue the week, watch it finish, start the next; every write fenced. */
  async function schedule(name: string, gate: Gate, leading: AbortSignal, token: bigint) {
    log(`${name} leads the scheduler with token ${token}`);
    while (!leading.aborted && !stopping.signal.aborted) {
      try {
        const week = await currentWeek(db);
        // A pause here is the classic one: the scheduler has read the state and is about to
        // write, and does not know it has lost its lease while it was stopped.
        await gate.pass();
        const phase = !week.enqueued ? 'enqueue' : week.completed ? 'next' : 'watch';
        const result = await fenced.write('weekly-digest', token, `week ${week.week}: ${phase}`);
        if (result === 'rejected') {
          await count(db, week.week, 'stale_writes_rejected');
          log(`${name}: its write with token ${token} was rejected by the fenced store (a newer scheduler wrote since)`);
          return;
        }
        if (phase === 'enqueue') await enqueueWeek(db, week.week);
        else if (phase === 'watch') await completeIfDone(db, week.week);
        else if (week.completedAt && Date.now() - week.completedAt.getTime() > BETWEEN_WEEKS_MS) {
          await startWeek(db, week.week + 1);
          log(`week ${week.week} done; week ${week.week + 1} starts`);
        }
      } catch (error) {
        if (error instanceof ServerCrashed) return;
        onError(name)(error); // and try again next round, while still leading
      }
      await sleep(1_000, leading);
    }
  }

  /** Each server's own lease: renewed every 2 s, later and later on the slow server. */
  async function membership(name: string, gate: Gate, client: LeaseClient, signal: AbortSignal) {
    let lease: Lease | null = null;
    while (!signal.aborted) {
      try {
        if (!lease) lease = await client.acquire(`fleet/${name}`, { holder: name, ttlMs: MEMBER_TTL_MS });
        else lease = await client.renew(lease);
      } catch (error) {
        if (error instanceof ServerCrashed) return;
        if (error instanceof LeaseLostError) lease = null;
        else onError(name)(error);
      }
      // The slow renewer drifts from every 2 s to every 5.6 s over a minute (margins from 4 s to 0.4 s), then starts again.
      const drift = name === SLOW_SERVER && faultsOn ? ((Date.now() / 60_000) % 1) * 3_600 : 0;
      await sleep(MEMBER_RENEW_MS + drift, signal);
    }
    if (lease && !gate.crashed) await client.release(lease).catch(() => {});
  }

  /** A worker: take a few jobs, send each (about a third of a second), acknowledge. */
  async function work(name: string, gate: Gate, signal: AbortSignal) {
    while (!signal.aborted) {
      try {
        await gate.pass();
        const jobs = await takeJobs(db, name, JOBS_PER_TAKE, JOB_VISIBILITY_MS);
        if (jobs.length === 0) {
          await sleep(1_000, signal);
          continue;
        }
        for (const job of jobs) {
          await sleep(250 + Math.random() * 150, signal);
          if (signal.aborted) return;
          await gate.pass();
          await send(db, name, job, !(faultsOn && Math.random() < LOST_ACK_RATE));
        }
      } catch (error) {
        // A crash ends the worker; anything else is logged and the worker goes on, as a real
        // one would (its jobs are taken again by someone after the visibility timeout).
        if (error instanceof ServerCrashed) return;
        onError(name)(error);
        await sleep(1_000, signal);
      }
    }
  }

  // ------------------------------------------------------------------ faults
  const pick = <T,>(items: T[]) => items[Math.floor(Math.random() * items.length)];
  function pauseLeader() {
    const leader = [...servers.values()].find((s) => s.leader() && !s.gate.paused && !s.gate.crashed);
    if (!leader) return;
    const ms = Math.round(SCHEDULER_TTL_MS * 1.5);
    leader.gate.pause(ms);
    record(leader.name, 'pause', `paused for ${ms / 1000} s (a stop-the-world pause longer than its ${SCHEDULER_TTL_MS / 1000} s lease) while leading the scheduler`);
  }
  function crashOne() {
    const candidate = pick([...servers.values()].filter((s) => !s.leader() && !s.gate.paused && !s.gate.crashed && s.name !== SLOW_SERVER));
    if (!candidate) return;
    candidate.gate.crash();
    candidate.stop.abort();
    const downMs = 8_000 + Math.round(Math.random() * 6_000);
    record(candidate.name, 'crash', `crashed (nothing released); restarts in ${Math.round(downMs / 1000)} s`);
    setTimeout(() => {
      if (stopping.signal.aborted) return;
      startServer(candidate.name);
      record(candidate.name, 'restart', 'restarted');
    }, downMs);
  }
  async function faultLoop() {
    // The first pause soon after start, so a newcomer sees a failover within the first minute.
    let nextPause = Date.now() + 20_000;
    let nextCrash = Date.now() + 35_000;
    while (!stopping.signal.aborted) {
      await sleep(1_000, stopping.signal);
      if (!faultsOn) continue;
      const now = Date.now();
      if (now >= nextPause) {
        pauseLeader();
        nextPause = now + 40_000 + Math.random() * 20_000;
      }
      if (now >= nextCrash) {
        crashOne();
        nextCrash = now + 30_000 + Math.random() * 20_000;
      }
    }
  }

  // The servers come up one after another, as a fleet does (not 18 in the same millisecond).
  void (async () => {
    for (let i = 1; i <= serverCount && !stopping.signal.aborted; i++) {
      startServer(`server-${String(i).padStart(2, '0')}`);
      await sleep(150, stopping.signal);
    }
  })();
  void faultLoop();
  log(`${serverCount} servers started; faults ${faultsOn ? 'on' : 'off'}`);

  return {
    servers: serverCount,
    faults: () => faultsOn,
    setFaults(on) {
      if (on !== faultsOn) log(`faults ${on ? 'on' : 'off'}`);
      faultsOn = on;
    },
    recentFaults: () => [...faults],
    serverStates: () =>
      [...servers.values()]
        .map((s) => ({ name: s.name, state: s.gate.crashed ? ('crashed' as const) : s.gate.paused ? ('paused' as const) : ('running' as const), leader: s.leader() }))
        .sort((a, b) => a.name.localeCompare(b.name)),
    async stop() {
      stopping.abort();
      // Let the servers resign and release (a clean shutdown), briefly.
      await sleep(300);
      await fenced.close();
      await backend.close();
    },
  };
}
