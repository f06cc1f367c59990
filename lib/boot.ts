// Server start-up inside `next start`: validate the config, open and migrate the store,
// and close it cleanly on SIGTERM/SIGINT (an embedded PGlite that is not closed needs
// crash recovery on its next open).
import { ConfigError, getConfig, type Config } from './config';
import { closeStore, getStore } from './db';
import { startProcessCollector, stopProcessCollector } from './collector/process';
import { StoreLockedError } from './db/embedded';
import { MigrationError } from './db/migrate';
import { toPublicError } from './errors';

const bootState = globalThis as typeof globalThis & { __leaseholdBooted?: boolean; __leaseholdStopping?: boolean };

export async function boot(): Promise<void> {
  if (bootState.__leaseholdBooted) return;
  bootState.__leaseholdBooted = true;

  let config;
  try {
    config = getConfig();
  } catch (error) {
    if (error instanceof ConfigError) fatal(error.message);
    throw error;
  }
  const where = config.store.kind === 'postgres' ? 'PostgreSQL (DATABASE_URL)' : `embedded PGlite in ${config.store.dataDir}`;
  console.log(`[leasehold] store: ${where}`);

  installShutdown();
  await startWithStore(config, Date.now(), 1);
}

/**
 * Opens the store, then starts the demo and the collector. A store that is locked by another
 * process or cannot be migrated will not get better by waiting: stop with the reason. A store
 * that cannot be reached yet (PostgreSQL still starting, a network blip) might: keep serving
 * (/api/health says 503, requests retry the open) and try again, 1 s, 2 s, ... up to every
 * 30 s, so that observation starts by itself when the store comes. Before, the collector of a
 * server started before its store never ran.
 */
async function startWithStore(config: Config, startedAt: number, attempt: number): Promise<void> {
  if (bootState.__leaseholdStopping) return;
  let store;
  try {
    store = await getStore();
    const status = await store.migrationStatus();
    console.log(
      `[leasehold] store ready in ${Date.now() - startedAt} ms: ${status.applied.length} of ${status.known.length} migrations applied`,
    );
  } catch (error) {
    if (error instanceof StoreLockedError || error instanceof MigrationError) fatal(error.message);
    const delayMs = Math.min(30_000, 1_000 * 2 ** Math.min(attempt - 1, 5));
    console.error(`[leasehold] store not available yet: ${toPublicError(error).message} (trying again in ${delayMs / 1000} s; the collector starts when it is)`);
    setTimeout(() => void startWithStore(config, startedAt, attempt + 1), delayMs).unref();
    return;
  }
  if (bootState.__leaseholdStopping) return;
  // The demo fleet first: its tables exist before the collector's first read of them.
  if (config.demo && store.pglite) {
    try {
      const { startDemo } = await import('./demo');
      await startDemo(store, { faults: process.env.LEASEHOLD_DEMO_FAULTS !== 'off', users: demoUsers() });
      console.log('[leasehold] demo: the weekly-digest fleet runs in this process (no sources configured; LEASEHOLD_DEMO=off to turn it off)');
    } catch (error) {
      // The console still serves (the demo source shows as down): say why, once.
      console.error(`[leasehold] demo: could not start: ${toPublicError(error).message}`);
    }
  }
  // The collector runs inside the server unless it is deployed on its own (`leasehold collect`).
  if (process.env.LEASEHOLD_COLLECTOR !== 'off') startProcessCollector(store, config);
}

function demoUsers(): number | undefined {
  const raw = process.env.LEASEHOLD_DEMO_USERS;
  if (!raw) return undefined;
  const users = Number(raw);
  if (!Number.isInteger(users) || users < 1 || users > 100_000) fatal(`LEASEHOLD_DEMO_USERS: expected a whole number from 1 to 100000, found "${raw}"`);
  return users;
}

function fatal(message: string): never {
  console.error(`[leasehold] cannot start: ${message}`);
  process.exit(1);
}

function installShutdown() {
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    bootState.__leaseholdStopping = true;
    console.log(`[leasehold] ${signal}: closing the store`);
    const timer = setTimeout(() => process.exit(1), 10_000);
    stopProcessCollector()
      .then(async () => (await import('./demo')).stopDemo())
      .then(closeStore)
      .catch((error: unknown) => console.error(`[leasehold] closing the store failed: ${String(error)}`))
      .finally(() => {
        clearTimeout(timer);
        process.exit(0);
      });
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
