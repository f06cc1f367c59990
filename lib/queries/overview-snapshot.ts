// What the server draws of the overview before the browser has run a line of script: the first
// leases, problems first, and the counters, from the in-memory list (lease-cache.ts). The page
// then replaces it with the live list. Bounded: when the list is not in memory yet (the first
// request after a start loads it from the store) or the store does not answer within WAIT_MS,
// there is no snapshot and the page draws its empty frame, as it would without one.
import 'server-only';
import type { Root } from '../root';
import type { LeaseView } from '../domain/types';
import { leaseListJson } from './lease-cache';
import type { StateCounts } from './lease-page';

/** `sources`: every lease per source (the snapshot holds the first few). */
export type OverviewSnapshot = { leases: LeaseView[]; total: number; sources: Record<string, number>; states: StateCounts };

const WAIT_MS = 300;
const LEASES = 30;

export async function overviewSnapshot(root: Root): Promise<OverviewSnapshot | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const read = (async (): Promise<OverviewSnapshot> => {
    const list = await leaseListJson(root, await root.store(), { sort: 'problems', limit: LEASES });
    // No countdown from the server: the browser counts on its own clock once it runs.
    const leases = (JSON.parse(list.json.toString('utf8')) as LeaseView[]).map((lease) => ({ ...lease, remainingMs: null }));
    return { leases, total: [...list.counts.values()].reduce((sum, n) => sum + n, 0), sources: Object.fromEntries(list.counts), states: list.states };
  })();
  const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), WAIT_MS)));
  try {
    return await Promise.race([read, late]);
  } catch {
    return null; // the page says what is wrong once its own read fails the same way
  } finally {
    clearTimeout(timer);
    read.catch(() => {}); // a read that lost the race may still fail later
  }
}
