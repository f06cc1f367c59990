'use client';
// One Server-Sent Events connection per tab, feeding react-query's cache. Lease messages
// can come by the thousand a second (every renewal of 10,000 leases): they are buffered and
// applied to the cached lists twice a second in one pass, and events only mark the queries
// they touch as stale, at most once a second. No polling, no refetch per message.
import { QueryClient, QueryClientProvider, useQueryClient } from '@tanstack/react-query';
import { createContext, useContext, useEffect, useState, type ReactNode } from 'react';
import type { LeaseEventView, LeaseView } from '@/lib/domain/types';
import type { LeaseDetail, LeaseListResponse, LiveLease, SourceStatusView } from './types';
import { withLocalDeadline } from './types';

export type LiveStatus = 'connecting' | 'live' | 'reconnecting';

const LiveContext = createContext<LiveStatus>('connecting');
export const useLiveStatus = () => useContext(LiveContext);

const APPLY_EVERY_MS = 500;
const INVALIDATE_EVERY_MS = 1_000;
const RECENT_MS = 30_000;
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
    // Messages of the last RECENT_MS: a list fetched while they arrived may predate them, so
    // they are applied again to every list that arrives (a lease only where it is newer).
    const recent = new Map<string, { lease: LeaseView; at: number }>();
    const recentSources = new Map<string, { source: SourceStatusView; at: number }>();
    let everConnected = false;
    const prune = (now: number) => {
      for (const [id, entry] of recent) if (now - entry.at > RECENT_MS) recent.delete(id);
      for (const [name, entry] of recentSources) if (now - entry.at > RECENT_MS) recentSources.delete(name);
    };
    // The first lease list a page gets may have been read before the stream connected (it is
    // preloaded with the page, and the overview may mount after the stream opens): whatever
    // changed in between reached neither. So once both exist, the list is read once more.
    let listArrived = false;
    let listReadAgain = false;
    const readListAgain = () => {
      if (listReadAgain || !listArrived || !everConnected) return;
      listReadAgain = true;
      setTimeout(() => void client.refetchQueries({ queryKey: ['leases'] }, { cancelRefetch: false }), 0);
    };
    const unsubscribeCache = client.getQueryCache().subscribe((event) => {
      if (event.type !== 'updated' || event.action.type !== 'success' || event.action.manual || event.query.queryKey[0] !== 'leases') return;
      listArrived = true;
      readListAgain();
      const now = Date.now();
      prune(now);
      if (recent.size === 0 && recentSources.size === 0) return;
      const updates = new Map([...recent].map(([id, { lease }]) => [id, withLocalDeadline(lease, now)]));
      const sourceUpdates = new Map([...recentSources].map(([name, { source }]) => [name, source]));
      client.setQueryData<LeaseListResponse>(event.query.queryKey, (old) => (old ? mergeIntoList(old, updates, new Map(), sourceUpdates, true) : old));
    });

    const applyLeases = () => {
      const now = Date.now();
      prune(now);
      if (leases.size === 0 && sources.size === 0 && transitions.size === 0) return;
      const updates = new Map([...leases].map(([id, lease]) => [id, withLocalDeadline(lease, now)]));
      const added = new Map(transitions);
      const sourceUpdates = new Map(sources);
      leases.clear();
      transitions.clear();
      sources.clear();
      client.setQueriesData<LeaseListResponse>({ queryKey: ['leases'] }, (old) => (old ? mergeIntoList(old, updates, added, sourceUpdates, false) : old));
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
      readListAgain();
      setStatus('live');
    });
    source.addEventListener('error', () => setStatus(everConnected ? 'reconnecting' : 'connecting'));
    source.addEventListener('lease', (message) => {
      const lease = parse<LeaseView>(message);
      if (!lease) return;
      leases.set(lease.id, lease);
      recent.set(lease.id, { lease, at: Date.now() });
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
      recentSources.set(status.name, { source: status, at: Date.now() });
      stale.add(JSON.stringify(['sources']));
      stale.add(JSON.stringify(['lease'])); // an open lease page: its stale mark may have changed
    });
    return () => {
      unsubscribeCache();
      source.close();
      clearInterval(applyTimer);
      clearInterval(invalidateTimer);
    };
  }, [client]);

  return <LiveContext.Provider value={status}>{children}</LiveContext.Provider>;
}

/**
 * The list with live updates applied: leases replaced (or added), changes of hands counted,
 * and the status of sources, whose leases turn stale or not with them (as the store does).
 * `onlyNewer`: keep a lease the list already shows in a newer picture than the update's.
 */
function mergeIntoList(
  old: LeaseListResponse,
  updates: Map<string, LiveLease>,
  added: Map<string, number>,
  sourceUpdates: Map<string, SourceStatusView>,
  onlyNewer: boolean,
): LeaseListResponse {
  const seen = new Set<string>();
  const staleBySource = new Map([...sourceUpdates].filter(([, s]) => s.status !== 'unknown').map(([name, s]) => [name, s.status === 'down']));
  const next = old.leases.map((original) => {
    const stale = staleBySource.get(original.source);
    const lease = stale === undefined || stale === original.stale ? original : { ...original, stale };
    seen.add(lease.id);
    const update = updates.get(lease.id);
    const more = added.get(lease.id) ?? 0;
    if ((!update || (onlyNewer && lease.observedAt > update.observedAt)) && more === 0) return lease;
    const merged = update && !(onlyNewer && lease.observedAt > update.observedAt) ? { ...update, stale: stale ?? update.stale, recentTransitions: update.recentTransitions ?? lease.recentTransitions } : lease;
    return more ? { ...merged, recentTransitions: (merged.recentTransitions ?? 0) + more } : merged;
  });
  // A lease the list has not seen yet (new in a source) joins it.
  for (const [id, lease] of updates) if (!seen.has(id)) next.push({ ...lease, recentTransitions: lease.recentTransitions ?? added.get(id) ?? 0 });
  const sources = sourceUpdates.size ? old.sources.map((s) => ({ ...s, ...(sourceUpdates.get(s.name) ?? {}) })) : old.sources;
  return { ...old, leases: next, sources: sources as LeaseListResponse['sources'] };
}

function parse<T>(message: MessageEvent): T | null {
  try {
    return JSON.parse(message.data as string) as T;
  } catch {
    return null; // a malformed message is dropped, never thrown into React
  }
}
