// lib/lease: the lease client library Leasehold observes. See client.ts for the API,
// postgres.ts, redis.ts and etcd.ts for each backend's layout (redis-scripts.ts holds the
// Redis scripts, redlock.ts the Redlock mode), elector.ts for leader election and
// fenced-store.ts for a resource that checks fencing tokens; timings.ts for the holder-side
// timings of every call, metrics.ts and reporter.ts for two ways of sending them on.
export { createLeaseClient, type AcquireOptions, type LeaseClient, type LeaseClientCommonOptions, type LeaseClientOptions } from './client';
export { createLeaderElector, type LeaderElector, type LeaderElectorOptions } from './elector';
export { createFencedStore, type FencedStore, type FencedStoreOptions, type LoggedWrite, type WriteResult } from './fenced-store';
export { BackendUnavailableError, LeaseAbortedError, LeaseLostError } from './errors';
export { leaseMetrics, type LeaseMetricsOptions } from './metrics';
export { createLeaseReporter, type LeaseReporter, type LeaseClaim, type LeaseReporterOptions, type LeaseReporterStats, type TelemetryReport } from './reporter';
export type { LeaseCall, LeaseCallOutcome, LeaseTiming, LeaseTimingListener } from './timings';
export type { BackendKind, Candidacy, Grant, Lease, LeaseBackend, LeaseInfo, RenewOptions } from './types';
