'use client';
// One Server-Sent Events connection per tab, feeding react-query's cache. Lease messages
// can come by the thousand a second (every renewal of 10,000 leases): they are buffered and
// applied to the cached lists twice a second in one pass, and events only mark the queries
// they touch as stale, at most once a second. No polling, no refetch per message.
import { QueryClient, QueryClientProvider, useQueryClient } from '@tanstack/react-query';
import { createContext, useContext, useEffect, useState, type ReactNode } from 'react';
import { TRANSITION_TYPES } from '@/lib/domain/health';
import { reduceLeaseList } from '@/lib/domain/lease-list';
// Checked as the server's bus defines them: a malformed message is dropped, never thrown into React.
import { parseStreamHello, parseStreamMessage } from '@/lib/live/messages';
import type { LeaseEventView } from '@/lib/domain/types';
import { noteListedSources, noteStreamedSource } from './source-status';
import type { LeaseDetail, LeaseListResponse, LiveLease, SourceStatusView } from './types';
import { withLocalDeadline } from './types';
import { onStreamScope, streamScope } from './stream-scope';

export type LiveStatus = 'connecting' | 'live' | 'reconnecting';

/** The stream's status, and since when (Date.now()) it has been that. */
const LiveContext = createContext<{ status: LiveStatus; since: number }>({ status: 'connecting', since: 0 });
export const useLiveStatus = () => useContext(LiveContext);

const APPLY_EVERY_MS = 500;
const INVALIDATE_EVERY_MS = 1_000;
/** A stream the server refused (429, 503) is opened again after 5 to 10 s (its Retry-After is 10 s at most). */
const REOPEN_AFTER_MS = 5_000;
/** The log keeps the stream's messages of the last LOG_MS, at most LOG_MAX of them. */
const LOG_MS = 15_000;
const LOG_MAX = 20_000;
const TRANSITIONS = new Set<string>(TRANSITION_TYPES);
const LISTS = { queryKey: ['leases'] };

type StreamMessage = { type: 'lease'; lease: LiveLease } | { type: 'event'; event: LeaseEventView } | { type: 'source'; source: SourceStatusView };
type Logged = { seq: number; at: number; message: StreamMessage };

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

/**
 * Positions (lib/live/bus.ts): every stream message has one, and the lease list says up
 * to which it is current. A list is brought up to the stream by applying exactly the messages
 * after its position, in order: none missed, none twice, none older than the list. A list
 * read before the stream's first message makes the stream start again right after the list
 * (`?after=`); the server replays what came between.
 */
function LiveStream({ children }: { children: ReactNode }) {
  const client = useQueryClient();
  const [live, setLive] = useState<{ status: LiveStatus; since: number }>(() => ({ status: 'connecting', since: 0 }));

  useEffect(() => {
    const setStatus = (status: LiveStatus) => setLive((old) => (old.status === status && old.since ? old : { status, since: Date.now() }));
    let epoch: string | null = null; // the connected stream's; null while (re)connecting
    let from = 0; // the stream has delivered every message after this one...
    let log: Logged[] = []; // ...and these are they, in order
    let everConnected = false;
    let epochOfLog: string | null = null; // the epoch the log's messages came in
    let mismatchRetried = false;
    let reopenedFor: string | null = null; // the list position the stream last started after
    let refetching = false;
    let source: EventSource | null = null;
    let reopenTimer: ReturnType<typeof setTimeout> | undefined;
    const details = new Map<string, LiveLease>(); // the newest of each lease since the last tick
    const told = new Map<string, string>(); // each source's status and error, as the stream last told them
    const stale = new Set<string>(); // JSON of query keys to invalidate

    const refetchLists = () => {
      if (refetching) return;
      refetching = true;
      setTimeout(() => void client.refetchQueries(LISTS, { cancelRefetch: false }).finally(() => (refetching = false)), 0);
    };
    const bringUp = (list: LeaseListResponse): LeaseListResponse => {
      if (epoch === null) return list; // not connected: hello looks again
      const at = parsePosition(list.position);
      if (!at || at.epoch !== epoch) {
        // Another server process answered (a restart, or several instances behind one name).
        if (!mismatchRetried) {
          mismatchRetried = true;
          refetchLists();
          return list;
        }
        // Best effort: what the stream has, where it is newer than the list.
        return log.length ? { ...merge(list, log, true), position: `${epoch}.${log.at(-1)!.seq}` } : list;
      }
      mismatchRetried = false;
      if (at.seq < from) {
        // Read before the stream's first message: start the stream again right after it
        // (once; when the server no longer has what came between, read the list again).
        if (reopenedFor !== list.position) {
          reopenedFor = list.position!;
          open(list.position);
        } else refetchLists();
        return list;
      }
      const index = firstAfter(log, at.seq);
      if (index === log.length) return list;
      return { ...merge(list, log.slice(index), false), position: `${epoch}.${log.at(-1)!.seq}` };
    };
    const bringUpAll = () => {
      for (const [key, list] of client.getQueriesData<LeaseListResponse>(LISTS)) {
        if (!list) continue;
        const next = bringUp(list);
        if (next !== list) client.setQueryData(key, next);
      }
    };

    const unsubscribeCache = client.getQueryCache().subscribe((event) => {
      if (event.type !== 'updated' || event.action.type !== 'success' || event.action.manual) return;
      const kind = event.query.queryKey[0];
      if (kind === 'sources') {
        const sources = (event.query.state.data as { sources?: SourceStatusView[] } | undefined)?.sources;
        if (sources) noteListedSources(sources);
        return;
      }
      if (kind !== 'leases') return;
      const list = event.query.state.data as LeaseListResponse | undefined;
      if (!list) return;
      noteListedSources(list.sources);
      const next = bringUp(list);
      if (next !== list) client.setQueryData(event.query.queryKey, next);
    });

    const tick = () => {
      const now = Date.now();
      // Forget what no list can need any more; the stream then counts as starting later.
      let drop = 0;
      while (drop < log.length && (now - log[drop]!.at > LOG_MS || log.length - drop > LOG_MAX)) drop++;
      if (drop) {
        from = log[drop - 1]!.seq;
        log = log.slice(drop);
      }
      bringUpAll();
      for (const [id, lease] of details) {
        const open = client.getQueryData<LeaseDetail>(['lease', id]);
        if (!open) continue; // nobody is looking at this lease
        // A renewal moves its chart: a lease page that is open reads its renewals again.
        if (open.renewedAt !== lease.renewedAt) stale.add(JSON.stringify(['renewals', id]));
        client.setQueryData<LeaseDetail>(['lease', id], { ...open, ...lease, events: open.events, recentTransitions: lease.recentTransitions ?? open.recentTransitions });
      }
      details.clear();
    };
    const invalidate = () => {
      for (const key of stale) void client.invalidateQueries({ queryKey: JSON.parse(key) as unknown[] });
      stale.clear();
    };
    const tickTimer = setInterval(tick, APPLY_EVERY_MS);
    const invalidateTimer = setInterval(invalidate, INVALIDATE_EVERY_MS);

    const received = (message: MessageEvent, parsed: StreamMessage) => {
      const at = parsePosition(message.lastEventId);
      if (!at || at.epoch !== epoch || at.seq <= (log.at(-1)?.seq ?? from)) return; // not in order: never applied
      log.push({ seq: at.seq, at: Date.now(), message: parsed });
    };

    function open(after?: string) {
      source?.close();
      epoch = null;
      const query = new URLSearchParams();
      if (after) query.set('after', after);
      if (streamScope() === 'sources') query.set('types', 'source');
      const stream = new EventSource(query.size ? `/api/v1/stream?${query}` : '/api/v1/stream');
      source = stream;
      stream.addEventListener('hello', (message) => {
        const hello = parseStreamHello(message.data as string);
        const at = parsePosition(hello?.position);
        if (!hello || !at) return;
        if (hello.gap) void client.invalidateQueries(); // missed messages: read everything again
        const resumed = !hello.gap && at.epoch === epochOfLog && at.seq === (log.at(-1)?.seq ?? from);
        if (!resumed) {
          log = [];
          from = at.seq;
        }
        epoch = at.epoch;
        epochOfLog = at.epoch;
        everConnected = true;
        setStatus('live');
        bringUpAll();
      });
      stream.addEventListener('error', () => {
        if (source !== stream) return;
        epoch = null;
        setStatus(everConnected ? 'reconnecting' : 'connecting');
        // An EventSource retries a dropped connection by itself, but gives up for good on an
        // answer that is not a stream (429 when the server has too many, 503 while its store
        // is away): open it again after a while, resuming after the last message applied.
        if (stream.readyState === EventSource.CLOSED) {
          clearTimeout(reopenTimer);
          reopenTimer = setTimeout(() => {
            if (source === stream) open(epochOfLog === null ? undefined : `${epochOfLog}.${log.at(-1)?.seq ?? from}`);
          }, REOPEN_AFTER_MS + Math.random() * REOPEN_AFTER_MS);
        }
      });
      stream.addEventListener('lease', (message) => {
        const parsed = parseStreamMessage(message.data as string, 'lease');
        if (parsed?.type !== 'lease') return;
        const { lease } = parsed;
        const live = withLocalDeadline(lease);
        details.set(lease.id, live);
        received(message, { type: 'lease', lease: live });
      });
      stream.addEventListener('event', (message) => {
        const parsed = parseStreamMessage(message.data as string, 'event');
        if (parsed?.type !== 'event') return;
        const { event } = parsed;
        if (TRANSITIONS.has(event.type)) stale.add(JSON.stringify(['failovers']));
        stale.add(JSON.stringify(['lease', event.leaseId]));
        stale.add(JSON.stringify(['events', event.leaseId]));
        stale.add(JSON.stringify(['renewals', event.leaseId]));
        received(message, { type: 'event', event });
      });
      stream.addEventListener('source', (message) => {
        const parsed = parseStreamMessage(message.data as string, 'source');
        if (parsed?.type !== 'source') return;
        const status = parsed.source as SourceStatusView;
        noteStreamedSource(status);
        // Most of these only move the source's last read: pages read again only on a change.
        const before = told.get(status.name);
        told.set(status.name, `${status.status}\u0000${status.lastError ?? ''}`);
        if (before !== told.get(status.name)) {
          stale.add(JSON.stringify(['sources']));
          stale.add(JSON.stringify(['lease'])); // an open lease page: its stale mark may have changed
        }
        received(message, { type: 'source', source: status });
      });
    }
    open();
    // The scope changed: the stream starts again after the last message applied, with the new
    // filter. Back to every message: the lists missed their leases' messages meanwhile and are read again.
    const unsubscribeScope = onStreamScope(() => {
      open(epochOfLog === null ? undefined : `${epochOfLog}.${log.at(-1)?.seq ?? from}`);
      if (streamScope() === 'all') refetchLists();
    });

    return () => {
      unsubscribeScope();
      unsubscribeCache();
      clearTimeout(reopenTimer);
      source?.close();
      clearInterval(tickTimer);
      clearInterval(invalidateTimer);
    };
  }, [client]);

  return <LiveContext.Provider value={live}>{children}</LiveContext.Provider>;
}

function parsePosition(position: string | null | undefined): { epoch: string; seq: number } | null {
  const match = /^([0-9a-f]{1,16})\.(\d{1,15})$/.exec(position ?? '');
  return match ? { epoch: match[1]!, seq: Number(match[2]) } : null;
}

/** Index of the first logged message after seq (the log is in order). */
function firstAfter(log: Logged[], seq: number): number {
  let lo = 0;
  let hi = log.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (log[mid]!.seq <= seq) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The list with these messages applied, in order: leases by lib/domain/lease-list.ts's rule
 * (the server's list cache applies the same), sources' statuses merged in.
 * `onlyNewer`: keep a lease the list already shows in a newer picture than the update's.
 */
function merge(list: LeaseListResponse, messages: Logged[], onlyNewer: boolean): LeaseListResponse {
  const leases = reduceLeaseList(
    list.leases,
    messages.map((logged) => logged.message),
    { onlyNewer },
  );
  const sourceUpdates = new Map<string, SourceStatusView>();
  for (const { message } of messages) if (message.type === 'source') sourceUpdates.set(message.source.name, message.source);
  const sources = sourceUpdates.size ? list.sources.map((s) => ({ ...s, ...(sourceUpdates.get(s.name) ?? {}) })) : list.sources;
  // Most ticks only move the sources' last reads: the lease list keeps its identity then.
  return { ...list, leases: leases as LiveLease[], sources: sources as LeaseListResponse['sources'] };
}
