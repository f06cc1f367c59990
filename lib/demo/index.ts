// The embedded demo of a composition root (lib/root; at most one): started at boot on the
// embedded store when no sources are configured, stopped when the root closes.
import type { Store } from '../db';
import { part, type Parts } from '../parts';
import { stats, type DigestStats } from './digest';
import { startFleet, type Fleet } from './fleet';
import { pgliteSql } from './sql';
import { inProcessTelemetry } from './telemetry';

type Running = { current?: { fleet: Promise<Fleet>; store: Store } };

const stopped = async (running: Running) => {
  const demo = running.current;
  running.current = undefined;
  if (demo) await (await demo.fleet.catch(() => null))?.stop();
};

const DEMO = part<Running>('demo fleet', () => ({}), stopped);

export async function startDemo(root: Parts, store: Store, options: { faults?: boolean; users?: number } = {}): Promise<Fleet> {
  if (!store.pglite) throw new Error('the demo runs on the embedded store only');
  const running = root.part(DEMO);
  if (!running.current) {
    const fleet = startFleet({ db: store.pglite, faults: options.faults, users: options.users, report: inProcessTelemetry(store) });
    running.current = { store, fleet };
    // A demo that failed to start is no demo: the API then says none runs, not an error.
    fleet.catch(() => {
      if (running.current?.fleet === fleet) running.current = undefined;
    });
  }
  return running.current.fleet;
}

/** The demo running in `root`, or null when it runs none. */
export function runningDemo(root: Parts): { fleet: Promise<Fleet>; stats: () => Promise<DigestStats> } | null {
  const demo = root.part(DEMO).current;
  if (!demo) return null;
  return { fleet: demo.fleet, stats: () => stats(pgliteSql(demo.store.pglite!)) };
}

/** Stops the demo running in `root` (closing the root does too). */
export async function stopDemo(root: Parts): Promise<void> {
  await stopped(root.part(DEMO));
}
