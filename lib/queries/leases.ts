// Read models for pages and the API: rows from the store, shaped as DESIGN.md section 5.
import 'server-only';
import type { Store } from '../db';
import type { Lease } from '../generated/prisma/client';
import type { Backend, Candidate, LeaseKind, LeaseState, LeaseView } from '../domain/types';

export type LeaseFilter = { source?: string; state?: LeaseState; q?: string; limit?: number };

export async function listLeases(store: Store, filter: LeaseFilter = {}): Promise<LeaseView[]> {
  const rows = await store.prisma.lease.findMany({
    where: {
      sourceName: filter.source,
      state: filter.state,
      ...(filter.q ? { OR: [{ key: { contains: filter.q } }, { holder: { contains: filter.q } }] } : {}),
    },
    orderBy: [{ sourceName: 'asc' }, { key: 'asc' }],
    take: filter.limit ?? 1000,
  });
  const now = Date.now();
  return rows.map((row) => toLeaseView(row, now));
}

/** remainingMs is derived from expiresAt, which the collector computed on its own clock. */
export function toLeaseView(row: Lease, now: number): LeaseView {
  return {
    id: row.id,
    source: row.sourceName,
    backend: row.backend as Backend,
    kind: row.kind as LeaseKind,
    key: row.key,
    state: row.state as LeaseState,
    holder: row.holder,
    token: row.token === null ? null : row.token.toString(),
    fenced: row.fenced,
    ttlMs: row.ttlMs,
    remainingMs: row.expiresAt && row.state === 'held' ? Math.max(0, row.expiresAt.getTime() - now) : null,
    acquiredAt: row.acquiredAt?.toISOString() ?? null,
    renewedAt: row.renewedAt?.toISOString() ?? null,
    expiresAt: row.expiresAt?.toISOString() ?? null,
    observedAt: row.observedAt.toISOString(),
    stale: row.stale,
    candidates: Array.isArray(row.candidates) ? (row.candidates as Candidate[]) : [],
    transitions: row.transitions,
  };
}
