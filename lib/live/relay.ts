// Cross-process live updates. A collector in another process writes to the PostgreSQL store
// and NOTIFYs "leasehold_changes"; this process LISTENs, reads what changed from the store,
// and publishes it on its own bus, so /api/v1/stream shows changes whoever collected them.
// The sources' last reads, written with every poll, are not notified: they are read here
// once a second (one small query) and published when they moved.
// Changes this process's own collector made are already on the bus and are skipped.
import pg from 'pg';
import type { Store } from '../db';
import { toEventView, toLeaseView } from '../db/lease-views';
import { retrying } from '../time/retry';
import { publish } from './bus';

const state = globalThis as typeof globalThis & { __leaseholdRelay?: { stop(): void } };

type Payload = { collector: string; source: string; sourceRow?: boolean; leases: string[] | null; events: string[] | null };
type SourceRecord = Awaited<ReturnType<Store['prisma']['source']['findMany']>>[number];
/** How often the sources' rows are read for the reads of collectors in other processes. */
const SOURCE_READS_EVERY_MS = 1_000;

/**
 * Starts relaying (once per process). `ownCollector`: the id of this process's collector, if
 * any, whose changes are already on the bus (lib/collector/process.ts processCollector).
 */
export function ensureRelay(store: Store, ownCollector: () => string | undefined) {
  if (state.__leaseholdRelay || store.url === null) return;
  const url = store.url;
  const stop = new AbortController();
  let client: pg.Client | null = null;

  const relay = async (payload: Payload) => {
    if (payload.collector === ownCollector()) return;
    const source = await store.prisma.source.findUnique({ where: { name: payload.source } });
    const leases = payload.leases?.length === 0 ? [] : await store.prisma.lease.findMany({ where: payload.leases ? { id: { in: payload.leases } } : { sourceName: payload.source } });
    const now = Date.now();
    if (payload.sourceRow && source) publishSource(source);
    for (const row of leases) publish({ type: 'lease', lease: toLeaseView(row, now, source?.lastGoodReadAt ?? null) });
    if (payload.events?.length) {
      const events = await store.prisma.leaseEvent.findMany({ where: { id: { in: payload.events.map((id) => BigInt(id)) } }, orderBy: { id: 'asc' } });
      for (const event of events) publish({ type: 'event', event: toEventView(event) });
    }
  };

  // What a source's row said when it was last published: a row another process's collector
  // wrote is published again when its status or last good read moved (the stream tells the
  // reads of sources this process observes itself as they happen).
  const told = new Map<string, string>();
  const publishSource = (source: SourceRecord) => {
    told.set(source.name, `${source.status}|${source.lastGoodReadAt?.getTime() ?? ''}`);
    publish({
      type: 'source',
      source: {
        name: source.name,
        backend: source.backend,
        status: source.status,
        lastGoodReadAt: source.lastGoodReadAt?.toISOString() ?? null,
        lastError: source.lastError,
        lastPollMs: source.lastPollMs,
      },
    });
  };
  const readSources = async () => {
    const own = ownCollector();
    for (const source of await store.prisma.source.findMany()) {
      if (source.collectorId === own) continue;
      if (told.get(source.name) !== `${source.status}|${source.lastGoodReadAt?.getTime() ?? ''}`) publishSource(source);
    }
  };
  const sourceTimer = setInterval(() => void readSources().catch(() => {}), SOURCE_READS_EVERY_MS);
  sourceTimer.unref();

  /** One LISTEN connection: resolves when it ends after it was set up, throws when it cannot be. */
  const listen = async () => {
    const listener = (client = new pg.Client({ connectionString: url, application_name: 'leasehold-relay', connectionTimeoutMillis: 5_000 }));
    const ended = new Promise<void>((resolve) => {
      listener.on('error', () => resolve());
      listener.on('end', () => resolve());
    });
    try {
      await listener.connect();
      listener.on('notification', (message) => {
        try {
          void relay(JSON.parse(message.payload ?? '{}') as Payload).catch(() => {});
        } catch {
          // A payload we did not write: ignore it.
        }
      });
      await listener.query('LISTEN leasehold_changes');
    } catch (error) {
      await listener.end().catch(() => {});
      throw error;
    }
    await ended;
    await listener.end().catch(() => {});
  };
  // Listening again whenever the connection ends; while the store is unreachable, after a
  // backoff from 1 s up to 10 s.
  void (async () => {
    while (!stop.signal.aborted) await retrying(listen, { what: 'listening for other collectors', signal: stop.signal, initialDelayMs: 1_000, maxDelayMs: 10_000 });
  })();
  state.__leaseholdRelay = {
    stop() {
      stop.abort();
      clearInterval(sourceTimer);
      void client?.end().catch(() => {});
    },
  };
}
