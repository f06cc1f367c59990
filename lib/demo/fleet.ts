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
import { createFencedStore, createLeaseClient, createLeaseReporter, type FencedStore, type LeaseBackend, type LeaseClient, type LeaseReporter } from '../lease';
import { setUp } from './digest';
import { Gate } from './gate';
import { runDigestServer, SCHEDULER_KEY, SCHEDULER_TTL_MS, SLOW_SERVER, wait } from './server';
import { DEMO_LEASE_TABLE, DEMO_SOURCE_ENTRY } from './source';
import type { TelemetrySend } from './telemetry';
import { pgliteSql, type DigestSql } from './sql';
import { systemClock } from '../time/clock';

export { SCHEDULER_KEY };

export type FleetOptions = {
  db: PGlite;
  servers?: number;
  users?: number;
  faults?: boolean;
  log?: (line: string) => void;
  /** Where the servers' reporter hands its reports (lib/demo/telemetry.ts); none: they report nothing. */
  report?: TelemetrySend;
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

const pick = <T,>(items: T[]) => items[Math.floor(Math.random() * items.length)];

/** The fleet while it runs: its servers on the shared backend and fenced store, the faults switch, and the faults done. */
class FleetRun {
  readonly stopping = new AbortController();
  readonly faults: FaultRecord[] = [];
  readonly servers = new Map<string, Server>();

  constructor(
    private readonly backend: LeaseBackend,
    private readonly fenced: FencedStore,
    private readonly sql: DigestSql,
    private readonly log: (line: string) => void,
    public faultsOn: boolean,
    private readonly reporter: LeaseReporter | null,
  ) {
    setMaxListeners(0, this.stopping.signal); // every server's signal follows it
  }

  record(server: string, kind: FaultRecord['kind'], detail: string) {
    this.faults.unshift({ at: new Date(systemClock.wall()).toISOString(), server, kind, detail });
    this.faults.length = Math.min(this.faults.length, 50);
    this.log(`${server}: ${detail}`);
  }

  startServer(name: string): Server {
    const gate = new Gate(name);
    const stop = new AbortController();
    const client = createLeaseClient({ backend: gate.wrap(this.backend), onTiming: this.reporter?.listener });
    const signal = AbortSignal.any([stop.signal, this.stopping.signal]);
    const { fenced, sql: db, log } = this;
    const { leader } = runDigestServer({ name, gate, client, fenced, db, signal, faults: () => this.faultsOn, log, reporter: this.reporter ?? undefined });
    const server = { name, gate, stop, client, leader };
    this.servers.set(name, server);
    return server;
  }

  /** The servers come up one after another, as a fleet does (not 18 in the same millisecond). */
  async startServers(count: number) {
    for (let i = 1; i <= count && !this.stopping.signal.aborted; i++) {
      this.startServer(`server-${String(i).padStart(2, '0')}`);
      await wait(150, this.stopping.signal);
    }
  }

  // ------------------------------------------------------------------ faults
  pauseLeader() {
    const leader = [...this.servers.values()].find((s) => s.leader() && !s.gate.paused && !s.gate.crashed);
    if (!leader) return;
    const ms = Math.round(SCHEDULER_TTL_MS * 1.5);
    leader.gate.pause(ms);
    this.record(leader.name, 'pause', `paused for ${ms / 1000} s (a stop-the-world pause longer than its ${SCHEDULER_TTL_MS / 1000} s lease) while leading the scheduler`);
  }

  crashOne() {
    const candidate = pick([...this.servers.values()].filter((s) => !s.leader() && !s.gate.paused && !s.gate.crashed && s.name !== SLOW_SERVER));
    if (!candidate) return;
    candidate.gate.crash();
    candidate.stop.abort();
    const downMs = 8_000 + Math.round(Math.random() * 6_000);
    this.record(candidate.name, 'crash', `crashed (nothing released); restarts in ${Math.round(downMs / 1000)} s`);
    void wait(downMs, this.stopping.signal).then(() => {
      if (this.stopping.signal.aborted) return;
      this.startServer(candidate.name);
      this.record(candidate.name, 'restart', 'restarted');
    });
  }

  async faultLoop() {
    // The first pause soon after start, so a newcomer sees a failover within the first minute.
    let nextPause = systemClock.wall() + 20_000;
    let nextCrash = systemClock.wall() + 35_000;
    while (!this.stopping.signal.aborted) {
      await wait(1_000, this.stopping.signal);
      if (!this.faultsOn) continue;
      const now = systemClock.wall();
      if (now >= nextPause) {
        this.pauseLeader();
        nextPause = now + 40_000 + Math.random() * 20_000;
      }
      if (now >= nextCrash) {
        this.crashOne();
        nextCrash = now + 30_000 + Math.random() * 20_000;
      }
    }
  }
}

export async function startFleet(options: FleetOptions): Promise<Fleet> {
  const { db } = options;
  const log = options.log ?? lineLogger('demo');
  const serverCount = options.servers ?? 18;
  // 1. The demo's schema and users, and what every server shares: the lease table and the fenced store.
  const sql = pgliteSql(db);
  await setUp(sql, options.users ?? 3_000);
  const pool = pglitePool(db);
  const backend = createBackend({ backend: 'postgres', pool, table: DEMO_LEASE_TABLE, ensureTable: false });
  const fenced: FencedStore = createFencedStore({ pool, table: 'pixly.digest_fence' });
  // 2. The servers (reporting what they see of their leases and what they believe), and the faults.
  const reporter = options.report
    ? createLeaseReporter({
        url: 'http://127.0.0.1/',
        token: '',
        leaseId: (key) => `${DEMO_SOURCE_ENTRY.name}/${DEMO_LEASE_TABLE}/${key}`,
        flushEveryMs: 2_000,
        send: options.report,
        // A lease not observed yet (the first second of a server) is refused and tried again: not worth a line.
        onError: (error) => (/HTTP 422/.test(error.message) ? undefined : log(`reporter: ${error.message}`)),
      })
    : null;
  const run = new FleetRun(backend, fenced, sql, log, options.faults ?? true, reporter);
  void run.startServers(serverCount);
  void run.faultLoop();
  log(`${serverCount} servers started; faults ${run.faultsOn ? 'on' : 'off'}`);

  return {
    servers: serverCount,
    faults: () => run.faultsOn,
    setFaults(on) {
      if (on !== run.faultsOn) log(`faults ${on ? 'on' : 'off'}`);
      run.faultsOn = on;
    },
    recentFaults: () => [...run.faults],
    serverStates: () =>
      [...run.servers.values()]
        .map((s) => ({ name: s.name, state: s.gate.crashed ? ('crashed' as const) : s.gate.paused ? ('paused' as const) : ('running' as const), leader: s.leader() }))
        .sort((a, b) => a.name.localeCompare(b.name)),
    async stop() {
      run.stopping.abort();
      // Let the servers resign and release (a clean shutdown), briefly.
      await wait(300);
      await reporter?.close();
      await fenced.close();
      await backend.close();
    },
  };
}
