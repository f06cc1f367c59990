// The collector's own numbers, for /metrics (Prometheus text format), kept by prom-client.
// One registry per process, on globalThis: Next may load this module twice, and prom-client
// throws when a metric name (the default process metrics' included) is registered twice.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

const POLL_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** A canary's round trips: from a loopback server's fraction of a millisecond to a call's 5 s deadline. */
const CANARY_BUCKETS_S = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

// Every metric this process keeps: name, help and label names. Labels are written sorted by name.
const GAUGES = {
  leasehold_source_up: ['1 when the last read of the source succeeded, 0 when it failed.', ['source']],
  leasehold_source_owned: ['1 for each source this process observes (holds the ownership lease of).', ['collector', 'source']],
  leasehold_tracked_leases: ['Leases this process tracks, by source and state.', ['source', 'state']],
  leasehold_write_queue_rows: ["Rows (leases, events, renewal samples, rollups) waiting behind the store write in progress, by source and queue (changes, renewals).", ['queue', 'source']],
  leasehold_stream_clients: ['Live streams (GET /api/v1/stream) open in this process.', []],
} as const;
const COUNTERS = {
  leasehold_events_total: ['Lease and source events written, by source and type.', ['source', 'type']],
  leasehold_renewals_total: ['Renewals observed, by source.', ['source']],
  leasehold_read_failures_total: ['Reads of a source that failed.', ['source']],
  leasehold_store_write_failures_total: ['Store writes that failed and were retried.', []],
  leasehold_store_refused_leases_total: ['Leases the store would not take as they were (written as unknown instead), by source.', ['source']],
  leasehold_stream_dropped_total: ['Live streams dropped because their client stopped reading.', []],
  leasehold_stream_rejected_total: ['Live streams refused with 429, by the cap reached (server, address).', ['reason']],
  leasehold_alerts_total: ['Alerts fired and resolved, by rule type and state.', ['rule', 'state']],
  leasehold_deadline_reads_total: ['Targeted reads made because a lease reached its deadline without a renewal seen, by source.', ['source']],
  leasehold_webhook_attempts_total: ['Webhook delivery attempts, by endpoint format and outcome (delivered, failed, gone, refused).', ['format', 'outcome']],
  leasehold_alert_write_failures_total: ['Alert writes that failed and were retried.', []],
  leasehold_retention_removed_total: ['What retention removed from the store (lib/db/retention.ts), by table and what (partitions dropped, rows deleted).', ['table', 'what']],
  leasehold_retention_runs_total: ['Retention runs of this process, by outcome (done; busy: a step gave up on a lock and is left to the next run).', ['outcome']],
  leasehold_canary_calls_total: ["Calls of each source's canary lease, by call (acquire, renew, release) and outcome (lib/lease's: ok, busy, lost, unavailable, aborted, error).", ['call', 'outcome', 'source']],
} as const;
const HISTOGRAMS = {
  leasehold_poll_duration_seconds: ['Time to read a source and write what changed, per read.', ['source']],
  leasehold_canary_renew_seconds: ["Round trip of each renewal of a source's canary lease (failed ones included: the time to fail).", ['source']],
} as const;
const HISTOGRAM_BUCKETS_S: Record<keyof typeof HISTOGRAMS, number[]> = { leasehold_poll_duration_seconds: POLL_BUCKETS_S, leasehold_canary_renew_seconds: CANARY_BUCKETS_S };

type Spec = readonly [help: string, labelNames: readonly string[]];
type LabelsOf<S extends Spec> = Record<S[1][number], string>;
type GaugeName = keyof typeof GAUGES;
type CounterName = keyof typeof COUNTERS;
type HistogramName = keyof typeof HISTOGRAMS;

type ProcessMetrics = {
  registry: Registry;
  gauges: Record<GaugeName, Gauge>;
  counters: Record<CounterName, Counter>;
  histograms: Record<HistogramName, Histogram>;
  /** The label sets each gauge holds, for `clear` (prom-client removes one exact label set only). */
  gaugeSeries: Map<GaugeName, Map<string, Record<string, string>>>;
};

const state = globalThis as typeof globalThis & { __leaseholdPromMetrics?: ProcessMetrics };

function build<N extends string, M>(specs: Record<N, Spec>, make: (name: N, help: string, labelNames: string[]) => M): Record<N, M> {
  return Object.fromEntries((Object.entries(specs) as [N, Spec][]).map(([name, [help, labelNames]]) => [name, make(name, help, [...labelNames])])) as Record<N, M>;
}

function processMetrics(): ProcessMetrics {
  if (state.__leaseholdPromMetrics) return state.__leaseholdPromMetrics;
  const registry = new Registry();
  const registers = [registry];
  const created: ProcessMetrics = {
    registry,
    gauges: build(GAUGES, (name, help, labelNames) => new Gauge({ name, help, labelNames, registers })),
    counters: build(COUNTERS, (name, help, labelNames) => new Counter({ name, help, labelNames, registers })),
    histograms: build(HISTOGRAMS, (name, help, labelNames) => new Histogram({ name, help, labelNames, buckets: HISTOGRAM_BUCKETS_S[name], registers })),
    gaugeSeries: new Map(),
  };
  collectDefaultMetrics({ register: registry });
  state.__leaseholdPromMetrics = created;
  return created;
}

/** This process's registry (created on first use; the same one on every later call). */
export const metricsRegistry = (): Registry => processMetrics().registry;

/** Labels sorted by name: prom-client writes them in the order of the object's keys. */
const sorted = <L extends Record<string, string>>(labels: L): L => Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) as L;

export const metrics = {
  inc<N extends CounterName>(name: N, labels: LabelsOf<(typeof COUNTERS)[N]>, by = 1) {
    processMetrics().counters[name].inc(sorted(labels), by);
  },
  set<N extends GaugeName>(name: N, labels: LabelsOf<(typeof GAUGES)[N]>, value: number) {
    const { gauges, gaugeSeries } = processMetrics();
    const key = sorted(labels);
    gauges[name].set(key, value);
    let series = gaugeSeries.get(name);
    if (!series) gaugeSeries.set(name, (series = new Map()));
    series.set(JSON.stringify(key), key);
  },
  /** Drops every series of a gauge matching `labels` (a source no longer owned, say). */
  clear<N extends GaugeName>(name: N, labels: Partial<LabelsOf<(typeof GAUGES)[N]>>) {
    const { gauges, gaugeSeries } = processMetrics();
    const series = gaugeSeries.get(name);
    if (!series) return;
    const wanted = Object.entries(labels);
    for (const [key, held] of series) {
      if (!wanted.every(([k, v]) => held[k] === v)) continue;
      gauges[name].remove(held);
      series.delete(key);
    }
  },
  observe<N extends HistogramName>(name: N, labels: LabelsOf<(typeof HISTOGRAMS)[N]>, seconds: number) {
    processMetrics().histograms[name].observe(sorted(labels), seconds);
  },
};

/** This process's registry in Prometheus text exposition format (version 0.0.4). */
export const renderMetrics = (): Promise<string> => metricsRegistry().metrics();
