// The embedded demo of this process (at most one), on globalThis like the store and the
// collector: started at boot on the embedded store when no sources are configured.
import type { Store } from '../db';
import { stats, type DigestStats } from './digest';
import { startFleet, type Fleet } from './fleet';
import { pgliteSql } from './sql';

const state = globalThis as typeof globalThis & { __leaseholdDemo?: { fleet: Promise<Fleet>; store: Store } };

export async function startDemo(store: Store, options: { faults?: boolean; users?: number } = {}): Promise<Fleet> {
  if (!store.pglite) throw new Error('the demo runs on the embedded store only');
  if (!state.__leaseholdDemo) {
    const fleet = startFleet({ db: store.pglite, faults: options.faults, users: options.users });
    state.__leaseholdDemo = { store, fleet };
    // A demo that failed to start is no demo: the API then says none runs, not an error.
    fleet.catch(() => {
      if (state.__leaseholdDemo?.fleet === fleet) state.__leaseholdDemo = undefined;
    });
  }
  return state.__leaseholdDemo.fleet;
}

/** The running demo, or null when this process runs none. */
export function runningDemo(): { fleet: Promise<Fleet>; stats: () => Promise<DigestStats> } | null {
  const demo = state.__leaseholdDemo;
  if (!demo) return null;
  return { fleet: demo.fleet, stats: () => stats(pgliteSql(demo.store.pglite!)) };
}

export async function stopDemo(): Promise<void> {
  const demo = state.__leaseholdDemo;
  state.__leaseholdDemo = undefined;
  if (demo) await (await demo.fleet).stop();
}
