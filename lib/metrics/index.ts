// The collector's own numbers, for /metrics (Prometheus text format). One registry per
// process, on globalThis.

type Labels = Record<string, string>;

const POLL_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

type Histogram = { buckets: number[]; sum: number; count: number };

type Registry = {
  counters: Map<string, Map<string, number>>;
  gauges: Map<string, Map<string, number>>;
  histograms: Map<string, Map<string, Histogram>>;
};

const state = globalThis as typeof globalThis & { __leaseholdMetrics?: Registry };

function registry(): Registry {
  state.__leaseholdMetrics ??= { counters: new Map(), gauges: new Map(), histograms: new Map() };
  return state.__leaseholdMetrics;
}

/** A label value as the text format writes it between quotes: backslash, newline and quote escaped. */
export const labelValue = (value: string) => value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');

/** Labels as the text format writes them, sorted by name, values escaped. */
export const labelKey = (labels: Labels) =>
  Object.entries(labels)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}="${labelValue(v)}"`)
    .join(',');

function series<T>(map: Map<string, Map<string, T>>, name: string): Map<string, T> {
  let values = map.get(name);
  if (!values) {
    values = new Map();
    map.set(name, values);
  }
  return values;
}

export const metrics = {
  inc(name: string, labels: Labels, by = 1) {
    const values = series(registry().counters, name);
    const key = labelKey(labels);
    values.set(key, (values.get(key) ?? 0) + by);
  },
  set(name: string, labels: Labels, value: number) {
    series(registry().gauges, name).set(labelKey(labels), value);
  },
  /** Drops every series of a gauge matching `labels` (a source no longer owned, say). */
  clear(name: string, labels: Labels) {
    const values = registry().gauges.get(name);
    if (!values) return;
    const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
    for (const key of values.keys()) if (wanted.every((w) => key.split(',').includes(w))) values.delete(key);
  },
  observe(name: string, labels: Labels, seconds: number) {
    const values = series(registry().histograms, name);
    const key = labelKey(labels);
    let histogram = values.get(key);
    if (!histogram) {
      histogram = { buckets: POLL_BUCKETS_S.map(() => 0), sum: 0, count: 0 };
      values.set(key, histogram);
    }
    POLL_BUCKETS_S.forEach((bound, i) => {
      if (seconds <= bound) histogram!.buckets[i]! += 1;
    });
    histogram.sum += seconds;
    histogram.count += 1;
  },
};

const HELP: Record<string, [string, string]> = {
  leasehold_source_up: ['gauge', '1 when the last read of the source succeeded, 0 when it failed.'],
  leasehold_source_owned: ['gauge', '1 for each source this process observes (holds the ownership lease of).'],
  leasehold_tracked_leases: ['gauge', 'Leases this process tracks, by source and state.'],
  leasehold_events_total: ['counter', 'Lease and source events written, by source and type.'],
  leasehold_renewals_total: ['counter', 'Renewals observed, by source.'],
  leasehold_read_failures_total: ['counter', 'Reads of a source that failed.'],
  leasehold_store_write_failures_total: ['counter', 'Store writes that failed and were retried.'],
  leasehold_store_refused_leases_total: ['counter', 'Leases the store would not take as they were (written as unknown instead), by source.'],
  leasehold_poll_duration_seconds: ['histogram', 'Time to read a source and write what changed, per read.'],
  leasehold_stream_clients: ['gauge', 'Live streams (GET /api/v1/stream) open in this process.'],
  leasehold_stream_dropped_total: ['counter', 'Live streams dropped because their client stopped reading.'],
  leasehold_stream_rejected_total: ['counter', 'Live streams refused with 429, by the cap reached (server, address).'],
};

/** The registry in Prometheus text exposition format (version 0.0.4). */
export function renderMetrics(extra: string[] = []): string {
  const { counters, gauges, histograms } = registry();
  const lines: string[] = [];
  const header = (name: string) => {
    const [type, help] = HELP[name] ?? ['untyped', name];
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
  };
  for (const [name, values] of [...gauges, ...counters]) {
    header(name);
    for (const [labels, value] of values) lines.push(`${name}{${labels}} ${value}`);
  }
  for (const [name, values] of histograms) {
    header(name);
    for (const [labels, h] of values) {
      const prefix = labels ? `${labels},` : '';
      POLL_BUCKETS_S.forEach((bound, i) => lines.push(`${name}_bucket{${prefix}le="${bound}"} ${h.buckets[i]}`));
      lines.push(`${name}_bucket{${prefix}le="+Inf"} ${h.count}`, `${name}_sum{${labels}} ${h.sum}`, `${name}_count{${labels}} ${h.count}`);
    }
  }
  return `${[...lines, ...extra].join('\n')}\n`;
}
