// The collector of this process (at most one), on globalThis like the store.
import type { Config } from '../config';
import type { Store } from '../db';
import { startCollector, type Collector } from './index';

const state = globalThis as typeof globalThis & { __leaseholdCollector?: Collector };

export function startProcessCollector(store: Store, config: Config): Collector {
  state.__leaseholdCollector ??= startCollector({ store, config });
  return state.__leaseholdCollector;
}

export function processCollector(): Collector | undefined {
  return state.__leaseholdCollector;
}

export async function stopProcessCollector(): Promise<void> {
  const collector = state.__leaseholdCollector;
  state.__leaseholdCollector = undefined;
  await collector?.stop();
}
