// The collector: observes every configured source, each by exactly one collector process.
//
// On a PostgreSQL store several collectors may run (inside `next start` and/or as
// `leasehold collect`). Each source is owned by whichever holds that source's lease in the
// store's own "CollectorLease" table, taken with lib/lease (Leasehold uses its own lease
// client on itself). The lease's fencing token goes with every write of that source, so a
// collector that was paused and lost the source cannot overwrite its successor's history;
// a killed collector's sources move to another within one lease TTL.
// On the embedded store there is one process, so it owns every source.
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Config } from '../config';
import type { Store } from '../db';
import { createLeaseClient, type LeaseClient } from '../lease';
import { pglitePool } from '../db/pglite-pool';
import { redactUrlsIn, scrub, secretsOf } from '../redact';
import { createSources } from '../sources/registry';
import type { LeaseSource } from '../sources/types';
import { linesTo, rootLogger, type Logger } from '../log';
import { metrics } from '../metrics';
import type { Clock } from '../time/clock';
import { retrying } from '../time/retry';
import { startAlerting, type Alerting } from '../alerts';
import { observeSource, type ObserveOptions } from './observe-source';
import { StaleOwnerError } from '../db/observer-writes';
import { createBus, type Bus } from '../live/bus';
import { backendOf } from '../sources/backends';
import type { CanaryTarget } from '../sources/backend';
import type { CanaryEntry } from '../sources/config-parts';
import type { PgPoolLike } from '../db/pg-like';
import { systemClock } from '../time/clock';
import { hidingCanary, startCanary } from './canary';
import { runRetention } from './retention';
import { shareSources } from './ownership';
import { forgetGoneCollectors, readCollectorLeases } from '../db/collector-leases';

export type CollectorOptions = {
  store: Store;
  config: Config;
  collectorId?: string;
  /** Ownership lease TTL (default 10 s): how soon a dead collector's sources move. */
  ownershipTtlMs?: number;
  /** The logger its areas take children of (collector, source, alerts): its composition root's, or the process's. */
  logger?: Logger;
  /** Its own lines (default: the `collector` child of `logger`). */
  log?: (line: string) => void;
  onRead?: ObserveOptions['onRead'];
  /** Alerts (rules and deliveries) in this process: on by config (`alerts.enabled`, default true) unless false here. */
  alerts?: boolean;
  /** Its deliveries' retry delays: the first one's ceiling (default 1 s) and the most they grow to (default 5 min); the chaos suite's receivers recover within a minute. */
  alertRetryBaseMs?: number;
  alertRetryMaxMs?: number;
  /** false: no retention runs (lib/collector/retention.ts: at start, then hourly) from this collector. Default on. */
  retention?: false;
  /** false: no deadline timers (ObserveOptions.deadlineTimers), for the alerts benchmark's peer. Default on. */
  deadlineTimers?: false;
  /** The clock its sources, observers and alerts read (lib/time); the system's unless a test hands its own. */
  clock?: Clock;
  /** Where its observers publish what changed (its composition root's bus, lib/root); a bus of its own when not given. */
  bus?: Bus;
};

export type Collector = {
  readonly id: string;
  /** Alert rules and deliveries of this process, when on. */
  readonly alerting: Alerting | null;
  /** Sources this collector observes right now. */
  owned(): string[];
  stop(): Promise<void>;
};

/** What every source's observer shares in one collector. */
type Observers = {
  options: CollectorOptions & { bus: Bus };
  id: string;
  log: (line: string) => void;
  ringSize: number;
  /** Sources observed right now. */
  owned: Set<string>;
  // Observers running per source: after ownership churn the next term's observer can start
  // before the last one has finished stopping, and the source is owned while either runs.
  running: Map<string, number>;
  alerting: Alerting | null;
  /** The sources' canary leases, by source name (only those configured with one). */
  canaries: ReadonlyMap<string, Canaried>;
};

type Canaried = { canary: CanaryEntry; target: Extract<CanaryTarget, { client: unknown }> };

/** Where each source's canary is held; a source whose canary cannot be held (the config check says why) has none. */
function canaryTargets(config: Config, embedded: PgPoolLike | null): Map<string, Canaried> {
  const out = new Map<string, Canaried>();
  for (const source of config.sources) {
    if (!source.canary) continue;
    const target = backendOf(source).canary?.(source, source.canary, { embedded });
    if (target && 'client' in target) out.set(source.name, { canary: source.canary, target });
  }
  return out;
}

export function startCollector(given: CollectorOptions): Collector {
  const options = { ...given, bus: given.bus ?? createBus() };
  const id = options.collectorId ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const base = options.logger ?? rootLogger();
  const log = options.log ?? linesTo(base.child({ area: 'collector' }));
  const ttlMs = options.ownershipTtlMs ?? options.config.collectorLeaseTtlMs;
  // On the embedded store, a source may name its database (pglite://embedded, lib/sources/postgres/config.ts): it is read through the store's own PGlite.
  const embedded = options.store.pglite ? pglitePool(options.store.pglite) : null;
  const canaries = canaryTargets(options.config, embedded);
  const sources = createSources(options.config, embedded, { clock: options.clock, log: base.child({ area: 'source' }) }).map((source) => {
    const canary = canaries.get(source.name);
    return canary ? hidingCanary(source, canary.target.observedKey) : source;
  });
  const stop = new AbortController();
  const alerting = options.alerts !== false && options.config.alerts?.enabled === true ? startAlerting({ store: options.store, config: options.config, workerId: id, log: base.child({ area: 'alerts' }), clock: options.clock, retryBaseMs: options.alertRetryBaseMs, retryMaxMs: options.alertRetryMaxMs }) : null;
  const observers: Observers = { options, id, log, ringSize: options.config.retention.renewalSamplesPerLease, owned: new Set(), running: new Map(), alerting, canaries };
  let leaseClient: LeaseClient | null = null;
  let stopping: Promise<void> | null = null;

  let runs: Promise<unknown>[];
  if (options.store.url === null) {
    runs = observeEverySource(observers, sources, stop.signal);
  } else {
    leaseClient = createLeaseClient({ backend: 'postgres', url: options.store.url, table: 'CollectorLease', ensureTable: false });
    runs = observeOwnedSources(observers, sources, leaseClient, ttlMs, stop.signal);
  }
  // The store's retention: this process tries it at start and hourly; one process of a shared store runs it at a time.
  if (options.retention !== false) {
    const { eventDays, rollupDays } = options.config.retention;
    runs.push(runRetention({ store: options.store, policy: { eventDays, rollupDays }, log, clock: options.clock }, stop.signal));
  }
  if (sources.length > 0) log(`${id} started for ${sources.length} source${sources.length === 1 ? '' : 's'}`);

  return {
    id,
    alerting,
    owned: () => [...observers.owned],
    stop() {
      // Idempotent: a second call waits for the first.
      stopping ??= (async () => {
        stop.abort();
        await Promise.allSettled(runs);
        await Promise.allSettled(sources.map((s) => s.close()));
        await leaseClient?.close();
        await alerting?.stop();
      })();
      return stopping;
    },
  };
}

/** The embedded store: one process, which observes every source. */
function observeEverySource(observers: Observers, sources: LeaseSource[], stop: AbortSignal): Promise<unknown>[] {
  // Each source gets a signal of its own (aborted with the collector's), as the elector
  // gives each one below: its observer's lanes and reads all listen on it.
  return sources.map((source) => {
    const own = new AbortController();
    stop.addEventListener('abort', () => own.abort(stop.reason), { once: true });
    return observe(observers, source, 0n, own.signal);
  });
}

/** A PostgreSQL store: each source observed by whichever collector holds its ownership lease, each collector keeping to its share (ownership.ts). */
function observeOwnedSources(observers: Observers, sources: LeaseSource[], client: LeaseClient, ttlMs: number, stop: AbortSignal): Promise<unknown>[] {
  const { id, log, options } = observers;
  let reads = 0;
  const readLeases = async () => {
    // Memberships of collectors long gone are forgotten now and then (each start adds one).
    if (reads++ % 100 === 0) await forgetGoneCollectors(options.store);
    return readCollectorLeases(options.store);
  };
  return [shareSources({ client, id, ttlMs, sources, readLeases, log, observe: (source, token, signal) => observe(observers, source, token, signal) }, stop)];
}

/** Observes one source with the ownership token `token` until `signal` aborts, counted as owned meanwhile. */
async function observe(observers: Observers, source: LeaseSource, token: bigint, signal: AbortSignal) {
  const { options, id, log, ringSize, owned, running, alerting, canaries } = observers;
  running.set(source.name, (running.get(source.name) ?? 0) + 1);
  owned.add(source.name);
  metrics.set('leasehold_source_owned', { source: source.name, collector: id }, 1);
  const canary = canaries.get(source.name);
  // The canary runs beside the observer, for as long as this collector owns the source.
  const stopCanary = canary ? startCanary({ source: source.name, ...canary, collectorId: id, store: options.store, alerts: alerting?.engine, clock: options.clock ?? systemClock, log: (line) => log(scrub(redactUrlsIn(line), secretsOf(options.config))) }, signal) : null;
  try {
    // An observer that fails for any reason but a lost ownership starts again: after 1 s,
    // growing to 10 s while it keeps failing at once, and 1 s again after one that ran for a
    // minute. The collector must not quietly stop watching a source it holds.
    await retrying(() => observeSource({ store: options.store, source, collectorId: id, token, ringSize, log, onRead: options.onRead, alerts: alerting?.engine, deadlineTimers: options.deadlineTimers, clock: options.clock, bus: options.bus }, signal), {
      what: `${source.name}: observer`,
      signal,
      initialDelayMs: 1_000,
      maxDelayMs: 10_000,
      resetAfterMs: 60_000,
      fatal: (error) => error instanceof StaleOwnerError,
      onFailure: ({ error, delayMs }) =>
        log(`${source.name}: observer failed (${scrub(redactUrlsIn(String((error as Error)?.stack ?? error)), secretsOf(options.config))}); restarting in ${(delayMs / 1000).toFixed(1)} s`),
    }).catch((error: unknown) => log((error as Error).message));
  } finally {
    await stopCanary?.();
    const left = running.get(source.name)! - 1;
    running.set(source.name, left);
    if (left === 0) {
      owned.delete(source.name);
      metrics.set('leasehold_source_owned', { source: source.name, collector: id }, 0);
    }
  }
}
