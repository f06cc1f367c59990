// The composition root of a process: what it holds once (its config, clock, logger, store,
// live bus, collector with its alert worker, relay, and the parts lower layers declare in
// lib/parts.ts), made from its configuration. boot() makes the server's root; a command makes
// its own; a test makes as many as it likes with createRoot and hands them down. The layers
// below are handed what they need and import nothing of this folder's; this folder imports
// them. Under Next each route handler gets its own copy of every module, so the process's root
// is kept on globalThis, in one slot (processRoot).
import { loadConfig, type Config, type LoadConfigOptions } from '../config';
import { postgresSource, type PostgresSourceConfig } from '../sources/postgres/config';
import { openStore, type Store } from '../db/store';
import { DEMO_SOURCE_ENTRY } from '../demo/source';
import { linesTo, rootLogger, type Logger } from '../log';
import { createParts, type Parts } from '../parts';
import { systemClock, type Clock } from '../time/clock';
import { createBus, type Bus } from '../live/bus';
import { startRelay, type Relay } from '../live/relay';

/**
 * The config of a Leasehold server or command that may run the embedded demo: the file and the
 * environment (lib/config), with the demo's one source (lib/demo/source.ts) registered where
 * nothing is configured.
 */
export function loadAppConfig(options: Omit<LoadConfigOptions, 'demoSource'> = {}): Config {
  return loadConfig({ ...options, demoSource: DEMO_SOURCE_ENTRY });
}

/** The embedded demo's source as loadAppConfig registers it: through the source schema. */
export const DEMO_SOURCE: PostgresSourceConfig = postgresSource.parse(DEMO_SOURCE_ENTRY);

export type Root = Parts & {
  readonly config: Config;
  readonly clock: Clock;
  /** The logger its pieces log through (pino; each takes a child for its area). */
  readonly log: Logger;
  readonly bus: Bus;
  /** Its store, opened (and migrated) on first use; a failed open is tried again on the next call. */
  store(): Promise<Store>;
  /** Closes its store if it was opened (what used it should be stopped first). */
  closeStore(): Promise<void>;
  /** Its collector (with the alert worker), when one runs. */
  collector(): RootCollector | undefined;
  /**
   * Runs its collector, once: `start` is handed the root's config, clock, bus and logger (boot
   * and `leasehold collect` pass lib/collector's startCollector; this folder does not import
   * it, as lib/collector sits below the request-side folders that import this one). Undefined,
   * and `start` not called, once the root is stopping: a shutdown that lands while boot is
   * still starting leaves no collector running behind close().
   */
  runCollector<C extends RootCollector>(start: (wiring: CollectorWiring) => C): C | undefined;
  /** Relays other processes' changes on a PostgreSQL store to its bus (lib/live/relay.ts), once per store. */
  ensureRelay(store: Store): void;
  /** Whether boot() has run with this root, and whether it is shutting down. */
  booted: boolean;
  stopping: boolean;
  /** Stops its collector, relays and parts, then closes its store (one it was given too). */
  close(): Promise<void>;
};

/** What a root needs of its collector: lib/collector's Collector is one. */
export type RootCollector = { readonly id: string; stop(): Promise<void> };

/** What a root hands the collector it runs. */
export type CollectorWiring = { config: Config; clock: Clock; bus: Bus; logger: Logger };

export type RootOptions = {
  config: Config;
  clock?: Clock;
  log?: Logger;
  /** A store already open (a test's), instead of opening the config's. */
  store?: Store;
};

export function createRoot(options: RootOptions): Root {
  const { config } = options;
  const clock = options.clock ?? systemClock;
  const parts = createParts();
  const bus = createBus();
  let opening: Promise<Store> | undefined = options.store ? Promise.resolve(options.store) : undefined;
  let collector: RootCollector | undefined;
  const relays = new Map<Store, Relay>();
  const root: Root = {
    config,
    clock,
    log: options.log ?? rootLogger(),
    bus,
    part: (which) => parts.part(which),
    store() {
      opening ??= openStore(config.store, { log: linesTo(root.log.child({ area: 'store' })) }).catch((error: unknown) => {
        opening = undefined;
        throw error;
      });
      return opening;
    },
    async closeStore() {
      const closing = opening;
      opening = undefined;
      if (!closing) return;
      const store = await closing.catch(() => undefined);
      await store?.close();
    },
    collector: () => collector,
    runCollector(start) {
      if (root.stopping) return undefined;
      collector ??= start({ config, clock, bus, logger: root.log });
      return collector as ReturnType<typeof start>;
    },
    ensureRelay(store) {
      if (!relays.has(store)) relays.set(store, startRelay(store, bus, () => collector?.id));
    },
    booted: false,
    stopping: false,
    async close() {
      root.stopping = true;
      const stopping = collector;
      collector = undefined;
      // The store is closed whatever failed before it: an embedded store left open needs crash recovery on its next open.
      try {
        await stopping?.stop();
      } finally {
        for (const relay of relays.values()) relay.stop();
        relays.clear();
        try {
          await parts.stopAll();
        } finally {
          await root.closeStore();
        }
      }
    },
  };
  return root;
}

const held = globalThis as typeof globalThis & { __leaseholdRoot?: Root };

/**
 * The root of this process: boot()'s in a server, made from the config on first use otherwise.
 * Throws ConfigError (every time) while the config is invalid.
 */
export function processRoot(): Root {
  held.__leaseholdRoot ??= createRoot({ config: loadAppConfig() });
  return held.__leaseholdRoot;
}

/** Makes `root` this process's (a test's own, or undefined to forget it); returns the one it replaces. */
export function useRoot(root: Root | undefined): Root | undefined {
  const previous = held.__leaseholdRoot;
  held.__leaseholdRoot = root;
  return previous;
}

/** The config of this process's root. Throws ConfigError (every time) while it is invalid. */
export function getConfig(): Config {
  return processRoot().config;
}

/** The store of this process's root, opened (and migrated) on first use. */
export function getStore(): Promise<Store> {
  return processRoot().store();
}
