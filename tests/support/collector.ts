// A collector on a test store, as `leasehold collect` would run one, with the config built
// from the sources given (tests and benchmarks need no config file).
import type { Config, SourceConfig } from '../../lib/config';
import type { AlertsConfig } from '../../lib/config/alerts-schema';
import { startCollector, type Collector, type CollectorOptions } from '../../lib/collector';
import type { Store } from '../../lib/db/store';

/** `alerts`: alert rules and deliveries on, with these settings over the defaults (off when absent). */
export type TestCollectorOptions = Pick<CollectorOptions, 'log' | 'logger' | 'onRead' | 'ownershipTtlMs' | 'deadlineTimers' | 'alertRetryBaseMs' | 'alertRetryMaxMs' | 'collectorId'> & { pollMs?: number; alerts?: Partial<AlertsConfig> };

export const TEST_ALERTS: AlertsConfig = { enabled: true, allowCidrs: ['127.0.0.1/32'], timeoutMs: 2_000, maxAttempts: 8, resendIntervalMs: 60_000 };

/** The config `leasehold collect` would run with, for these sources on this store. */
export function testConfig(store: Store, sources: SourceConfig[], options: Pick<TestCollectorOptions, 'pollMs' | 'alerts'> = {}): Config {
  return {
    sources,
    pollMs: options.pollMs ?? 200,
    retention: { rollupDays: 30, eventDays: 90, renewalSamplesPerLease: 120 },
    file: null,
    demo: false,
    store: store.url === null ? { kind: 'pglite', dataDir: '' } : { kind: 'postgres', url: store.url },
    host: '127.0.0.1',
    port: 0,
    collectorLeaseTtlMs: 10_000,
    alerts: options.alerts ? { ...TEST_ALERTS, ...options.alerts } : { ...TEST_ALERTS, enabled: false },
  } as Config;
}

export function testCollector(store: Store, sources: SourceConfig[], options: TestCollectorOptions = {}): Collector {
  const config = testConfig(store, sources, options);
  return startCollector({ store, config, log: options.log ?? (() => {}), logger: options.logger, onRead: options.onRead, ownershipTtlMs: options.ownershipTtlMs, deadlineTimers: options.deadlineTimers, alertRetryBaseMs: options.alertRetryBaseMs, alertRetryMaxMs: options.alertRetryMaxMs, collectorId: options.collectorId });
}
