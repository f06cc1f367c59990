// A collector on a test store, as `leasehold collect` would run one, with the config built
// from the sources given (tests and benchmarks need no config file).
import type { Config, SourceConfig } from '../../lib/config';
import { startCollector, type Collector, type CollectorOptions } from '../../lib/collector';
import type { Store } from '../../lib/db/store';

export type TestCollectorOptions = Pick<CollectorOptions, 'log' | 'onRead' | 'ownershipTtlMs'> & { pollMs?: number };

export function testCollector(store: Store, sources: SourceConfig[], options: TestCollectorOptions = {}): Collector {
  const config = {
    sources,
    pollMs: options.pollMs ?? 200,
    retention: { rollupDays: 30, eventDays: 90, renewalSamplesPerLease: 120 },
    file: null,
    demo: false,
    store: store.url === null ? { kind: 'pglite', dataDir: '' } : { kind: 'postgres', url: store.url },
    host: '127.0.0.1',
    port: 0,
    collectorLeaseTtlMs: 10_000,
  } as Config;
  return startCollector({ store, config, log: options.log ?? (() => {}), onRead: options.onRead, ownershipTtlMs: options.ownershipTtlMs });
}
