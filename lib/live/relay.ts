// Cross-process live updates. A collector in another process writes to the PostgreSQL store
// and NOTIFYs "leasehold_changes"; this process LISTENs, reads what changed from the store,
// and publishes it on its own bus, so /api/v1/stream shows changes whoever collected them.
// The sources' last reads, written with every poll, are not notified: they are read here
// once a second (one small query) and published when they moved.
// Changes this process's own collector made are already on the bus and are skipped.
import type pg from 'pg';
import type { Store } from '../db';
import { listenForChanges, type ChangeNotice } from '../db/change-notices';
import { readEventViews, readLeaseViews } from '../db/leases';
import { readSource, readSources, type SourceRecord } from '../db/sources';
import { systemClock } from '../time/clock';
import { retrying } from '../time/retry';
import type { Bus } from './bus';

export type Relay = { stop(): void };

/** How often the sources' rows are read for the reads of collectors in other processes. */
const SOURCE_READS_EVERY_MS = 1_000;

/**
 * Starts relaying to `bus` (a composition root does, once: lib/root ensureRelay). `ownCollector`:
 * the id of the root's collector, if any, whose changes are already on the bus. Nothing to relay
 * on the embedded store: one process writes it.
 */
export function startRelay(store: Store, bus: Bus, ownCollector: () => string | undefined): Relay {
  if (store.url === null) return { stop() {} };
  const { publish } = bus;
  const stop = new AbortController();
  let client: pg.Client | null = null;

  const relay = async (payload: ChangeNotice) => {
    if (payload.collector === ownCollector()) return;
    const source = payload.sourceRow ? await readSource(store, payload.source) : null;
    const leases = payload.leases?.length === 0 ? [] : await readLeaseViews(store, payload.leases ? { ids: payload.leases } : { source: payload.source });
    if (source) publishSource(source);
    for (const lease of leases) publish({ type: 'lease', lease });
    if (payload.events?.length) for (const event of await readEventViews(store, payload.events.map((id) => BigInt(id)))) publish({ type: 'event', event });
  };

  const { publishSource, relaySources } = sourceRelay(store, bus, ownCollector);
  const sourceTimer = setInterval(() => void relaySources().catch(() => {}), SOURCE_READS_EVERY_MS);
  sourceTimer.unref();

  /** One LISTEN connection (lib/db/change-notices.ts): resolves when it ends after it was set up, throws when it cannot be. */
  const listen = () =>
    listenForChanges(
      store,
      (notice) => void relay(notice).catch(() => {}),
      (listener) => (client = listener),
    );
  // Listening again a second after the connection ends; while the store is unreachable, after
  // a backoff from 1 s up to 10 s.
  void (async () => {
    while (!stop.signal.aborted) {
      await retrying(listen, { what: 'listening for other collectors', signal: stop.signal, initialDelayMs: 1_000, maxDelayMs: 10_000 });
      await systemClock.sleep(1_000, stop.signal);
    }
  })();
  return {
    stop() {
      stop.abort();
      clearInterval(sourceTimer);
      void client?.end().catch(() => {});
    },
  };
}

/**
 * What a source's row said when it was last published: a row another process's collector
 * wrote is published again when its status or last good read moved (the stream tells the
 * reads of sources this process observes itself as they happen).
 */
function sourceRelay(store: Store, { publish }: Bus, ownCollector: () => string | undefined) {
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
  const relaySources = async () => {
    const own = ownCollector();
    for (const source of await readSources(store)) {
      if (source.collectorId === own) continue;
      if (told.get(source.name) !== `${source.status}|${source.lastGoodReadAt?.getTime() ?? ''}`) publishSource(source);
    }
  };
  return { publishSource, relaySources };
}
