// The `telemetry` collector of bench/alerts-bench.ts (issue 27): while its alerts are measured,
// the same process takes holders' reports at 5,000 renewals a second, as a console serving
// POST /api/v1/telemetry beside its collector would: five requests a second of 1,000
// renewals over 100 of the PostgreSQL source's leases, each through the endpoint's own
// parsing and store write (lib/demo/telemetry.ts hands a body to them without HTTP). Each
// report claims its lease for its seeded holder and token, so the alert engine reads and
// judges every claim too (a claim that did not match the backend would raise split_brain,
// counted among the "other webhooks").
import type { Store } from '../lib/db/store';
import { inProcessTelemetry } from '../lib/demo/telemetry';
import { percentile } from './support';

const LEASES = 100;
const RENEWALS_PER_REQUEST = 1_000;
const REQUESTS_PER_SECOND = 5;

export type IngestResult = { renewals: number; requests: number; refused: number; seconds: number; requestMs: number[] };

/** Starts the reports; `stop` ends them and says what was taken. `victims`: indexes of the PostgreSQL leases this phase lets expire, left out. */
export function startIngest(store: Store, pgLeases: number, victims: ReadonlySet<number>) {
  const send = inProcessTelemetry(store);
  // The seeded rows: job-N, held by worker-(N % 97) with token N (bench/seed-leases.ts).
  const leases: number[] = [];
  for (let i = 0; leases.length < LEASES && i < pgLeases; i++) if (!victims.has(i)) leases.push(i + 1);
  const result: IngestResult = { renewals: 0, requests: 0, refused: 0, seconds: 0, requestMs: [] };
  const started = performance.now();
  let stopped = false;
  const body = () => {
    const at = new Date().toISOString();
    const per = RENEWALS_PER_REQUEST / leases.length;
    return JSON.stringify({
      reports: leases.map((n) => ({
        lease: `pg/leases/job-${n}`,
        holder: `worker-${n % 97}`,
        token: String(n),
        claims: true,
        claimForMs: 3_000,
        renewals: Array.from({ length: per }, () => ({ at, rttMs: 1 + Math.random() * 4, lateMs: Math.random() * 20, ok: true })),
      })),
    });
  };
  const loop = (async () => {
    for (let k = 0; !stopped; k++) {
      // On schedule: request k is due k/5 s after the start; one that runs late delays the next, never doubles up.
      const due = started + (k * 1000) / REQUESTS_PER_SECOND;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      if (stopped) break;
      const sent = performance.now();
      const answer = await send(body());
      result.requestMs.push(performance.now() - sent);
      result.requests += 1;
      if (answer.status === 202) result.renewals += RENEWALS_PER_REQUEST;
      else result.refused += 1;
    }
  })();
  return {
    async stop(): Promise<IngestResult> {
      stopped = true;
      await loop;
      result.seconds = (performance.now() - started) / 1000;
      return result;
    },
  };
}

type Phase = { size: number; variant: string; latencies: Record<string, number[]>; ingested?: IngestResult };

/** The table under the alerts bench's: what the telemetry collector took, and its p99 against the plain collector's. */
export function ingestReport(phases: readonly Phase[]): string {
  const fmt = (x: number) => (Number.isNaN(x) ? '—' : x < 10 ? x.toFixed(1) : Math.round(x).toLocaleString('en'));
  const lines = [
    "Holders' reports taken by the telemetry collector, and its deadline → webhook p99 against the collector without them (same leases, load and victims' spacing, run one after the other):",
    '',
    '| leases | renewals taken / s | requests (refused) | request p50 / p99 / max | p99 without → with reports (pg / redis / etcd) | ratio (pg / redis / etcd) |',
    '|---:|---:|---|---|---|---|',
  ];
  for (const with_ of phases.filter((p) => p.variant === 'telemetry' && p.ingested)) {
    const without = phases.find((p) => p.size === with_.size && p.variant === 'ours');
    const i = with_.ingested!;
    const backends = ['pg', 'redis', 'etcd'];
    const p99 = (p: Phase | undefined, b: string) => percentile(p?.latencies[b] ?? [], 99);
    lines.push(
      `| ${with_.size.toLocaleString('en')} | ${Math.round(i.renewals / i.seconds).toLocaleString('en')} | ${i.requests} (${i.refused}) | ${fmt(percentile(i.requestMs, 50))} / ${fmt(percentile(i.requestMs, 99))} / ${fmt(Math.max(...i.requestMs))} ms | ` +
        `${backends.map((b) => `${fmt(p99(without, b))} → ${fmt(p99(with_, b))}`).join(' / ')} ms | ${backends.map((b) => (p99(with_, b) / p99(without, b)).toFixed(2)).join(' / ')} |`,
    );
  }
  return lines.join('\n');
}
