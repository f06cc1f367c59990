'use client';
// One Server-Sent Events connection per tab, feeding react-query's cache. Lease messages
// can come by the thousand a second (every renewal of 10,000 leases): they are buffered and
// applied to the cached lists twice a second in one pass, and events only mark the queries
// they touch as stale, at most once a second. No polling, no refetch per message.
import { QueryClient, QueryClientProvider, useQueryClient } from '@tanstack/react-query';
import { createContext, useContext, useEffect, useState, type ReactNode } from 'react';
import type { LeaseEventView, LeaseView } from '@/lib/domain/types';
import type { LeaseDetail, LeaseListResponse, SourceStatusView } from './types';
import { withLocalDeadline } from './types';

export type LiveStatus = 'connecting' | 'live' | 'reconnecting';

const LiveContext = createContext<LiveStatus>('connecting');
export const useLiveStatus = () => useContext(LiveContext);

const APPLY_EVERY_MS = 500;
const INVALIDATE_EVERY_MS = 1_000;
const TRANSITIONS = new Set(['acquired', 'released', 'expired', 'taken_over', 'force_expired', 'force_released']);

export function Providers({ children }: { children: ReactNode }) {
  const [client] = useState(
    () =>
      new QueryClient({
        defaultOptions: {
          // The stream keeps data fresh; refetch only when a page asks, or after a reconnect.
          queries: { staleTime: 60_000, refetchOnWindowFocus: false, retry: 1 },
        },
      }),
  );
  return (
    <QueryClientProvider client={client}>
      <LiveStream>{children}</LiveStream>
    </QueryClientProvider>
  );
}

function LiveStream({ children }: { children: ReactNode }) {
  const client = useQueryClient();
  const [status, setStatus] = useState<LiveStatus>('connecting');

  useEffect(() => {
    const leases = new Map<string, LeaseView>();
    const transitions = new Map<string, number>();
    const sources = new Map<string, SourceStatusView>();
    const stale = new Set<string>(); // JSON of query keys to invalidate
    let everConnected = false;

    const applyLeases = () => {
      if (leases.size === 0 && sources.size === 0) return;
      const now = Date.now();
      const updates = new Map([...leases].map(([id, lease]) => [id, withLocalDeadline(lease, now)]));
      const added = new Map(transitions);
      const sourceUpdates = new Map(sources);
      leases.clear();
      transitions.clear();
      sources.clear();
      client.setQueriesData<LeaseListResponse>({ queryKey: ['leases'] }, (old) => {
        if (!old) return old;
        const seen = new Set<string>();
        // A source going down or coming back marks all its leases stale or not (as the store does).
        const staleBySource = new Map([...sourceUpdates].filter(([, s]) => s.status !== 'unknown').map(([name, s]) => [name, s.status === 'down']));
        const next = old.leases.map((original) => {
          const stale = staleBySource.get(original.source);
          const lease = stale === undefined || stale === original.stale ? original : { ...original, stale };
          const update = updates.get(lease.id);
          const more = added.get(lease.id) ?? 0;
          if (!update && more === 0) return lease;
          seen.add(lease.id);
          const merged = update ? { ...update, recentTransitions: update.recentTransitions ?? lease.recentTransitions } : lease;
          return more ? { ...merged, recentTransitions: (merged.recentTransitions ?? 0) + more } : merged;
        });
        // A lease the list has not seen yet (new in a source) joins it.
        for (const [id, lease] of updates) if (!seen.has(id)) next.push({ ...lease, recentTransitions: added.get(id) ?? 0 });
        const nextSources = sourceUpdates.size ? old.sources.map((s) => ({ ...s, ...(sourceUpdates.get(s.name) ?? {}) })) : old.sources;
        return { ...old, leases: next, sources: nextSources as LeaseListResponse['sources'] };
      });
      for (const [id, lease] of updates) {
        const open = client.getQueryData<LeaseDetail>(['lease', id]);
        if (!open) continue; // nobody is looking at this lease
        // A renewal moves its chart: a lease page that is open reads its renewals again.
        if (open.renewedAt !== lease.renewedAt) stale.add(JSON.stringify(['renewals', id]));
        client.setQueryData<LeaseDetail>(['lease', id], { ...open, ...lease, events: open.events, recentTransitions: lease.recentTransitions ?? open.recentTransitions });
      }
    };
    const invalidate = () => {
      for (const key of stale) void client.invalidateQueries({ queryKey: JSON.parse(key) as unknown[] });
      stale.clear();
    };
    const applyTimer = setInterval(applyLeases, APPLY_EVERY_MS);
    const invalidateTimer = setInterval(invalidate, INVALIDATE_EVERY_MS);

    const source = new EventSource('/api/v1/stream');
    source.addEventListener('open', () => {
      // After a reconnect, messages may have been missed: read everything again, once.
      if (everConnected) void client.invalidateQueries();
      everConnected = true;
      setStatus('live');
    });
    source.addEventListener('error', () => setStatus(everConnected ? 'reconnecting' : 'connecting'));
    source.addEventListener('lease', (message) => {
      const lease = parse<LeaseView>(message);
      if (lease) leases.set(lease.id, lease);
    });
    source.addEventListener('event', (message) => {
      const event = parse<LeaseEventView>(message);
      if (!event) return;
      if (TRANSITIONS.has(event.type)) {
        transitions.set(event.leaseId, (transitions.get(event.leaseId) ?? 0) + 1);
        stale.add(JSON.stringify(['failovers']));
      }
      stale.add(JSON.stringify(['lease', event.leaseId]));
      stale.add(JSON.stringify(['events', event.leaseId]));
      stale.add(JSON.stringify(['renewals', event.leaseId]));
    });
    source.addEventListener('source', (message) => {
      const status = parse<SourceStatusView>(message);
      if (!status) return;
      sources.set(status.name, status);
      stale.add(JSON.stringify(['sources']));
      stale.add(JSON.stringify(['lease'])); // an open lease page: its stale mark may have changed
    });
    return () => {
      source.close();
      clearInterval(applyTimer);
      clearInterval(invalidateTimer);
    };
  }, [client]);

  return <LiveContext.Provider value={status}>{children}</LiveContext.Provider>;
}

function parse<T>(message: MessageEvent): T | null {
  try {
    return JSON.parse(message.data as string) as T;
  } catch {
    return null; // a malformed message is dropped, never thrown into React
  }
}
