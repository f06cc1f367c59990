// Holder-side timings as prom-client metrics, for the holder's own /metrics:
//
//   const registry = new Registry();
//   const client = createLeaseClient({ backend: 'redis', urls, onTiming: leaseMetrics({ registry }) });
//   // serve `await registry.metrics()` on your /metrics
//
// Series (the prefix is `lease_` unless given):
//   lease_call_duration_seconds{backend,call,outcome,lease}   round trip of every acquire, renew, release
//   lease_renewal_lateness_seconds{backend,lease}             how late each renewal was sent against when it was due
//   lease_call_failures_total{backend,call,outcome,lease}     calls that ended lost, unavailable, aborted or error
//   lease_claimed{backend,lease}                              1 while this process believes it holds the lease
//
// `lease` is the key unless `leaseLabel` says otherwise; past `maxLeases` distinct values
// (default 100) further leases share the value "other", so a holder of a lock per order
// cannot explode the series count.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { LeaseTimingListener } from './timings';

export type LeaseMetricsOptions = {
  /** The registry the holder serves; the metrics are registered in it (and nowhere else). */
  registry: Registry;
  /** Name prefix (default "lease_"). */
  prefix?: string;
  /** The `lease` label of a key (default: the key itself). */
  leaseLabel?: (key: string) => string;
  /** Distinct `lease` values before the rest are labelled "other" (default 100). */
  maxLeases?: number;
  /** Round-trip buckets in seconds (default 1 ms to 10 s). */
  buckets?: number[];
};

const DEFAULT_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const LATENESS_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export function leaseMetrics(options: LeaseMetricsOptions): LeaseTimingListener {
  const { registry, prefix = 'lease_', leaseLabel = (key: string) => key, maxLeases = 100 } = options;
  const registers = [registry];
  const duration = new Histogram({
    name: `${prefix}call_duration_seconds`,
    help: 'Round trip of each acquire, renew and release this process sent, by outcome',
    labelNames: ['backend', 'call', 'outcome', 'lease'] as const,
    buckets: options.buckets ?? DEFAULT_BUCKETS_S,
    registers,
  });
  const lateness = new Histogram({
    name: `${prefix}renewal_lateness_seconds`,
    help: 'How late each renewal was sent against when it was due (event-loop stalls, pauses, CPU starvation)',
    labelNames: ['backend', 'lease'] as const,
    buckets: LATENESS_BUCKETS_S,
    registers,
  });
  const failures = new Counter({
    name: `${prefix}call_failures_total`,
    help: 'Calls that ended lost, unavailable, aborted or in error',
    labelNames: ['backend', 'call', 'outcome', 'lease'] as const,
    registers,
  });
  const claimed = new Gauge({
    name: `${prefix}claimed`,
    help: '1 while this process believes it holds the lease, 0 after it gave it up or lost it',
    labelNames: ['backend', 'lease'] as const,
    registers,
  });
  const labels = new Set<string>();
  /** The leases whose gauge was ever set: a refused acquire sets it to 0 only for those. */
  const gauged = new Set<string>();
  const labelOf = (key: string) => {
    const label = leaseLabel(key);
    if (labels.has(label)) return label;
    if (labels.size >= maxLeases) return 'other';
    labels.add(label);
    return label;
  };

  return (timing) => {
    const lease = labelOf(timing.key);
    const { backend, call, outcome } = timing;
    duration.observe({ backend, call, outcome, lease }, timing.rttMs / 1000);
    if (timing.lateMs !== null) lateness.observe({ backend, lease }, timing.lateMs / 1000);
    if (outcome !== 'ok' && outcome !== 'busy') failures.inc({ backend, call, outcome, lease });
    // A refused acquire says nothing of a lease this process never held; after it held one
    // (an elector that stopped leading campaigns again), it says the claim is over.
    if (outcome === 'busy' && !gauged.has(lease)) return;
    gauged.add(lease);
    claimed.set({ backend, lease }, timing.claims ? 1 : 0);
  };
}
