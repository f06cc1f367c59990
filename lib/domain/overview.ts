// The overview's rows: filter, sort and group the leases. Pure, so the page stays a thin
// view and the order ("problems first") is tested on its own.
import { leaseHealth, problemRank, type LeaseHealth } from './health';
import type { LeaseView } from './types';

export const STATE_FILTERS = ['all', 'problems', 'held', 'free', 'expired', 'unknown', 'stale'] as const;
export type StateFilter = (typeof STATE_FILTERS)[number];
export const SORTS = ['problems', 'key', 'remaining', 'token', 'holder', 'transitions'] as const;
export type Sort = (typeof SORTS)[number];

/**
 * The overview's first read of the lease list: the whole list when it holds at most
 * OVERVIEW_WHOLE_LIMIT leases (then filtered, sorted and kept live in the browser); past that,
 * the server pages it (components/overview/lease-pages.ts), this read being the first page.
 */
export const OVERVIEW_WHOLE_LIMIT = 10_000;
export const OVERVIEW_FIRST_READ = `/api/v1/leases?sort=problems&limit=${OVERVIEW_WHOLE_LIMIT}`;

export type OverviewFilter = { source: string | null; state: StateFilter; text: string; sort: Sort };

export type OverviewRow<L> =
  | { type: 'group'; source: string; backend: string; count: number; problems: number; down: boolean }
  | { type: 'lease'; lease: L; health: LeaseHealth };

type Lease = LeaseView & { localExpiresAt?: number | null };

export function parseOverviewFilter(params: { get(name: string): string | null }): OverviewFilter {
  const state = params.get('state');
  const sort = params.get('sort');
  return {
    source: params.get('source') || null,
    state: (STATE_FILTERS as readonly string[]).includes(state ?? '') ? (state as StateFilter) : 'all',
    text: params.get('q') ?? '',
    sort: (SORTS as readonly string[]).includes(sort ?? '') ? (sort as Sort) : 'problems',
  };
}

function matchesState(lease: Lease, health: LeaseHealth, state: StateFilter): boolean {
  switch (state) {
    case 'all':
      return true;
    case 'problems':
      return health.problems.length > 0;
    case 'stale':
      return lease.stale;
    default:
      return !lease.stale && lease.state === state;
  }
}

/** Tokens highest first, exact for any size (decimal strings); none last. */
export const compareTokens = (a: string | null, b: string | null) => {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a.length !== b.length ? b.length - a.length : b < a ? -1 : 1; // highest first, exact for any size
};

/**
 * The rows to show: one group row per source (sources whose leases have problems first when
 * sorting by problems), then its leases in the chosen order. `downSources` are the sources
 * that cannot be read right now.
 */
export function overviewRows<L extends Lease>(leases: readonly L[], filter: OverviewFilter, downSources: ReadonlySet<string>): { rows: OverviewRow<L>[]; shown: number } {
  const text = filter.text.trim().toLowerCase();
  const groups = new Map<string, { backend: string; leases: { lease: L; health: LeaseHealth; rank: number }[] }>();
  let shown = 0;
  for (const lease of leases) {
    if (filter.source && lease.source !== filter.source) continue;
    if (text && !`${lease.id}\u0000${lease.holder ?? ''}\u0000${lease.lastHolder ?? ''}`.toLowerCase().includes(text)) continue;
    const health = leaseHealth(lease);
    if (!matchesState(lease, health, filter.state)) continue;
    let group = groups.get(lease.source);
    if (!group) groups.set(lease.source, (group = { backend: lease.backend, leases: [] }));
    group.leases.push({ lease, health, rank: problemRank(health) });
    shown++;
  }
  // Soonest expiry first: the same order as remaining time, on whichever clock set it.
  const remaining = (lease: L) => lease.localExpiresAt ?? Infinity;
  const byKey = (a: { lease: L }, b: { lease: L }) => (a.lease.key < b.lease.key ? -1 : a.lease.key > b.lease.key ? 1 : 0);
  const compare: Record<Sort, (a: { lease: L; rank: number }, b: { lease: L; rank: number }) => number> = {
    problems: (a, b) => a.rank - b.rank || byKey(a, b),
    key: byKey,
    remaining: (a, b) => remaining(a.lease) - remaining(b.lease) || byKey(a, b),
    token: (a, b) => compareTokens(a.lease.token, b.lease.token) || byKey(a, b),
    holder: (a, b) => (a.lease.holder ?? '\uffff').localeCompare(b.lease.holder ?? '\uffff') || byKey(a, b),
    transitions: (a, b) => (b.lease.recentTransitions ?? 0) - (a.lease.recentTransitions ?? 0) || byKey(a, b),
  };
  const ordered = [...groups.entries()].map(([source, group]) => {
    group.leases.sort(compare[filter.sort]);
    const problems = group.leases.filter((entry) => entry.health.problems.length > 0).length;
    return { source, group, problems, bestRank: group.leases[0]?.rank ?? Infinity };
  });
  ordered.sort((a, b) => (filter.sort === 'problems' ? a.bestRank - b.bestRank : 0) || (a.source < b.source ? -1 : a.source > b.source ? 1 : 0));
  const rows: OverviewRow<L>[] = [];
  for (const { source, group, problems } of ordered) {
    rows.push({ type: 'group', source, backend: group.backend, count: group.leases.length, problems, down: downSources.has(source) });
    for (const { lease, health } of group.leases) rows.push({ type: 'lease', lease, health });
  }
  return { rows, shown };
}
