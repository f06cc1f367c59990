// The composition root of a process: what it holds once, made from its configuration. The
// layers below are handed what they need (lib/db opens a store from the StoreConfig it is given;
// lib/config validates the config it is given the demo's entry for) and import nothing of this
// folder's; this folder imports them. Under Next each route handler gets its own copy of every
// module, so what is held lives on globalThis, under one name per piece.
import { loadConfig, type Config, type LoadConfigOptions } from '../config';
import { postgresSource, type PostgresSourceConfig } from '../sources/postgres/config';
import { openStore, type Store } from '../db/store';
import { DEMO_SOURCE_ENTRY } from '../demo/source';
import { lineLogger } from '../log';

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

const held = globalThis as typeof globalThis & { __leaseholdConfig?: Config; __leaseholdStore?: Promise<Store> };

/** The config of this process, loaded once. Throws ConfigError (every time) while it is invalid. */
export function getConfig(): Config {
  held.__leaseholdConfig ??= loadAppConfig();
  return held.__leaseholdConfig;
}

/** The store of this process, opened (and migrated) on first use. A failed open is retried on the next call. */
export function getStore(): Promise<Store> {
  held.__leaseholdStore ??= openStore(getConfig().store, { log: lineLogger('store') }).catch((error: unknown) => {
    held.__leaseholdStore = undefined;
    throw error;
  });
  return held.__leaseholdStore;
}

/** Closes the store of this process if it was opened. */
export async function closeStore(): Promise<void> {
  const opening = held.__leaseholdStore;
  held.__leaseholdStore = undefined;
  if (!opening) return;
  const store = await opening.catch(() => undefined);
  await store?.close();
}
