// Server start-up inside `next start`: validate the config, open and migrate the store,
// and close it cleanly on SIGTERM/SIGINT (an embedded PGlite that is not closed needs
// crash recovery on its next open).
import { ConfigError } from './config';
import { exposureWarning } from './auth/exposure';
import { processRoot, type Root } from './root';
import { StoreLockedError } from './db/embedded';
import { MigrationError } from './db/migrate';
import { durabilityWarning } from './db/store';
import { toPublicError } from './errors';
import { logger } from './log';
import { retrying } from './time/retry';

const log = () => logger('boot');

/** Aborted on SIGTERM/SIGINT: ends the retries of opening the store. */
const shutdown = new AbortController();

/** Makes the process's composition root (lib/root) from its config, and starts what it runs. */
export async function boot(): Promise<void> {
  let root: Root;
  try {
    root = processRoot();
  } catch (error) {
    if (error instanceof ConfigError) fatal(error.message);
    throw error;
  }
  if (root.booted) return;
  root.booted = true;
  const { config } = root;
  const where = config.store.kind === 'postgres' ? 'PostgreSQL (DATABASE_URL)' : `embedded PGlite in ${config.store.dataDir}`;
  logger('store').info(where);
  const exposed = exposureWarning(config);
  if (exposed) logger('auth').warn(exposed);

  installShutdown(root);
  // Boot waits for the first attempt (and what follows a good one); later attempts run on
  // their own while the server serves.
  await new Promise<void>((attempted) => void startWithStore(root, root.clock.wall(), attempted).finally(attempted));
}

/**
 * Opens the store, then starts the demo and the collector. A store that is locked by another
 * process or cannot be migrated will not get better by waiting: stop with the reason. A store
 * that cannot be reached yet (PostgreSQL still starting, a network blip) might: keep serving
 * (/api/health says 503, requests retry the open) and try again after a backoff with jitter
 * from 1 s up to 30 s (lib/time/retry.ts), so that observation starts by itself when the store
 * comes.
 */
async function startWithStore(root: Root, startedAt: number, attempted: () => void): Promise<void> {
  const { config } = root;
  const store = await retrying(
    async () => {
      const store = await root.store();
      const status = await store.migrationStatus();
      log().info(`store ready in ${root.clock.wall() - startedAt} ms: ${status.applied.length} of ${status.known.length} migrations applied`);
      const undurable = await durabilityWarning(store).catch(() => null);
      if (undurable) log().warn(undurable);
      return store;
    },
    {
      what: 'opening the store',
      signal: shutdown.signal,
      initialDelayMs: 1_000,
      maxDelayMs: 30_000,
      fatal: (error) => error instanceof StoreLockedError || error instanceof MigrationError,
      onFailure: ({ error, delayMs }) => {
        log().warn(`store not available yet: ${toPublicError(error).message} (trying again in ${(delayMs / 1000).toFixed(1)} s; the collector starts when it is)`);
        attempted();
      },
    },
  ).catch((error: unknown) => fatal((error as Error).message));
  if (!store || root.stopping) return;
  // Endpoints' signing secrets are sealed with LEASEHOLD_SECRET_KEY: without the key they
  // need, this server would fail every delivery and could not add an endpoint; say so now.
  await prepareSecrets(store);
  // The demo fleet first: its tables exist before the collector's first read of them.
  if (config.demo && store.pglite) {
    try {
      const { startDemo } = await import('./demo');
      await startDemo(root, store, { faults: process.env.LEASEHOLD_DEMO_FAULTS !== 'off', users: demoUsers() });
      logger('demo').info('the weekly-digest fleet runs in this process (no sources configured; LEASEHOLD_DEMO=off to turn it off)');
      const { DEMO_ADMIN, resetDemoAdmin } = await import('./auth/demo-admin');
      const password = await resetDemoAdmin(store);
      const { ensureDemoInbox } = await import('./alerts/demo-inbox');
      await ensureDemoInbox(root, store, config.port);
      // Printed once, on standard output as plain text (not as a log line; where stdout is collected, it is there too).
      process.stdout.write(`\n  Demo admin for this run: ${DEMO_ADMIN} / ${password}\n  (sign in at /login to try force-expire; pages are readable from this machine without signing in)\n\n`);
    } catch (error) {
      // The console still serves (the demo source shows as down): say why, once.
      logger('demo').error(`could not start: ${toPublicError(error).message}`);
    }
  }
  if (!config.demo) {
    const { DEMO_ADMIN, retireDemoAdmin } = await import('./auth/demo-admin');
    if (await retireDemoAdmin(store).catch(() => false)) logger('auth').warn(`${DEMO_ADMIN} is disabled: the demo does not run here (sources are configured, or LEASEHOLD_DEMO=off)`);
  }
  // The collector runs inside the server unless it is deployed on its own (`leasehold collect`).
  if (process.env.LEASEHOLD_COLLECTOR !== 'off') {
    const { startCollector } = await import('./collector');
    root.runCollector((wiring) => startCollector({ ...wiring, store }));
  }
}

async function prepareSecrets(store: Awaited<ReturnType<Root['store']>>) {
  const { prepareSecretsAtRest, SecretsAtRestError } = await import('./alerts/secrets-at-rest');
  try {
    await prepareSecretsAtRest(store, (line) => logger('alerts').info(line));
  } catch (error) {
    if (error instanceof SecretsAtRestError) fatal(error.message);
    // The store failing now is the store's to report (requests retry it); deliveries say why they fail.
    logger('alerts').warn(`the endpoints' signing secrets could not be checked: ${toPublicError(error).message}`);
  }
}

function demoUsers(): number | undefined {
  const raw = process.env.LEASEHOLD_DEMO_USERS;
  if (!raw) return undefined;
  const users = Number(raw);
  if (!Number.isInteger(users) || users < 1 || users > 100_000) fatal(`LEASEHOLD_DEMO_USERS: expected a whole number from 1 to 100000, found "${raw}"`);
  return users;
}

function fatal(message: string): never {
  log().fatal(`cannot start: ${message}`);
  process.exit(1);
}

function installShutdown(root: Root) {
  const stop = (signal: NodeJS.Signals) => {
    if (root.stopping) return;
    root.stopping = true;
    shutdown.abort();
    log().info(`${signal}: closing the store`);
    const timer = setTimeout(() => process.exit(1), 10_000);
    // The collector first, then the demo and every other part, then the store (lib/root close).
    root
      .close()
      .catch((error: unknown) => log().error({ err: error }, 'closing the store failed'))
      .finally(() => {
        clearTimeout(timer);
        process.exit(0);
      });
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
