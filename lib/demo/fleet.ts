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
import { lineLogger } from '../log';
import { createBackend } from '../lease/client';
import { createFencedStore, createLeaseClient, type FencedStore, type LeaseClient } from '../lease';
import { setUp } from './digest';
import { Gate } from './gate';
import { runDigestServer, SCHEDULER_KEY, SCHEDULER_TTL_MS, SLOW_SERVER, wait } from './server';
import { DEMO_LEASE_TABLE } from './source';
import { pgliteSql } from './sql';

export { SCHEDULER_KEY };

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

export async function startFleet(options: FleetOptions): Promise<Fleet> {
  const { db } = options;
  const log = options.log ?? lineLogger('demo');
  const serverCount = options.servers ?? 18;
  const sql = pgliteSql(db);
  await setUp(sql, options.users ?? 3_000);
  const pool = pglitePool(db);
  const backend = createBackend({ backend: 'postgres', pool, table: DEMO_LEASE_TABLE, ensureTable: false });
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
  function startServer(name: string): Server {
    const gate = new Gate(name);
    const stop = new AbortController();
    const client = createLeaseClient({ backend: gate.wrap(backend) });
    const signal = AbortSignal.any([stop.signal, stopping.signal]);
    const { leader } = runDigestServer({ name, gate, client, fenced, db: sql, signal, faults: () => faultsOn, log });
    const server = { name, gate, stop, client, leader };
    servers.set(name, server);
    return server;
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
      await wait(1_000, stopping.signal);
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
      await wait(150, stopping.signal);
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
      await wait(300);
      await fenced.close();
      await backend.close();
    },
  };
}
