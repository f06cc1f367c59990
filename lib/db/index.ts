// The process-wide store. Pages, route handlers and instrumentation.ts each get their own
// copy of this module under Next, so the open store lives on globalThis.
import { getConfig } from '../config';
import { lineLogger } from '../log';
import { openStore, type Store } from './store';

const processState = globalThis as typeof globalThis & { __leaseholdStore?: Promise<Store> };

/** The store of this process, opened (and migrated) on first use. A failed open is retried on the next call. */
export function getStore(): Promise<Store> {
  processState.__leaseholdStore ??= openStore(getConfig().store, {
    log: lineLogger('store'),
  }).catch((error: unknown) => {
    processState.__leaseholdStore = undefined;
    throw error;
  });
  return processState.__leaseholdStore;
}

/** Closes the store of this process if it was opened. */
export async function closeStore(): Promise<void> {
  const opening = processState.__leaseholdStore;
  processState.__leaseholdStore = undefined;
  if (!opening) return;
  const store = await opening.catch(() => undefined);
  await store?.close();
}

export type { Store } from './store';
