// The reporter: holder-side timings posted to Leasehold in compact batches, so that the
// console can set what the holder saw (round trips, lateness, whether it believes it holds)
// beside what the backend shows.
//
//   const reporter = createLeaseReporter({ url: 'http://leasehold:3000', token: process.env.LEASEHOLD_REPORTER_TOKEN!, source: 'orders-redis' });
//   const client = createLeaseClient({ backend: 'redis', urls, onTiming: reporter.listener });
//   ...
//   await reporter.close(); // sends what is left
//
// Every `flushEveryMs` it posts to `<url>/api/v1/telemetry`:
//   { "reports": [{ "lease": "<source>/<key>", "holder": "...", "token": "<decimal or null>",
//                   "claims": true|false, "renewals": [{ "at": "<ISO>", "rttMs": n, "lateMs": n|null, "ok": bool }] }] }
// with at most 1,000 renewals and well under 1 MB a request. A lease the holder believes it
// holds is reported at every flush, renewals or not, so that Leasehold can compare the claim
// with the backend; a claim that ends is reported once more, as false.
//
// Leasehold unreachable or answering 429/5xx: the renewals are kept (the newest
// `maxPendingRenewals`, the oldest dropped and counted) and sent with the next flush. A 4xx
// other than 429 names something wrong with the report itself: that batch is dropped and the
// answer handed to onError, since sending it again would be refused again.
import { monotonicNow } from './deadline';
import type { LeaseTiming, LeaseTimingListener } from './timings';

export type LeaseReporterOptions = {
  /** Leasehold's base URL (the reporter posts to `<url>/api/v1/telemetry`). */
  url: string;
  /** An API token of the `reporter` role. */
  token: string;
  /** The Leasehold source the keys belong to: leases are named "<source>/<key>". */
  source?: string;
  /** Or: the Leasehold lease id of a key, or null to leave that key unreported. */
  leaseId?: (key: string) => string | null;
  /** How often to post (default 5 s). */
  flushEveryMs?: number;
  /** Renewals kept while Leasehold cannot be reached (default 10,000); older ones are dropped. */
  maxPendingRenewals?: number;
  /** Deadline of one post (default 5 s). */
  timeoutMs?: number;
  /** A post that failed, or an answer that refused a batch. Default: one line on stderr. */
  onError?: (error: Error) => void;
};

export type LeaseReporterStats = {
  /** Renewals Leasehold accepted. */
  sent: number;
  /** Renewals dropped: refused by Leasehold (4xx) or pushed out while it could not be reached. */
  dropped: number;
  /** Renewals waiting for the next flush. */
  pending: number;
  /** Posts that failed or were refused. */
  failedPosts: number;
};

export type LeaseReporter = {
  /** The listener to hand the client (`onTiming`). */
  readonly listener: LeaseTimingListener;
  /** Posts what is pending now; resolves when the posts have been answered. */
  flush(): Promise<void>;
  stats(): LeaseReporterStats;
  /** Stops the timer and posts what is left. */
  close(): Promise<void>;
};

/** The endpoint's own limits (docs/telemetry.md): renewals in one request, and its body's size. */
export const TELEMETRY_MAX_RENEWALS = 1_000;
export const TELEMETRY_MAX_BYTES = 1_000_000;
/** Room kept below TELEMETRY_MAX_BYTES for what an estimate misses. */
const BATCH_BYTES = 900_000;

export type ReportedRenewal = { at: string; rttMs: number; lateMs: number | null; ok: boolean };
export type TelemetryReport = { lease: string; holder: string; token: string | null; claims: boolean; renewals: ReportedRenewal[] };

type Entry = {
  lease: string;
  holder: string;
  token: bigint | null;
  claimUntil: number | null;
  /** The claim Leasehold last heard from us (null: nothing yet). */
  reportedClaims: boolean | null;
  renewals: ReportedRenewal[];
};

const round1 = (ms: number) => Math.round(ms * 10) / 10;

export function createLeaseReporter(options: LeaseReporterOptions): LeaseReporter {
  const endpoint = new URL('/api/v1/telemetry', options.url).toString();
  const { source } = options;
  if (!options.leaseId && !source) throw new TypeError('createLeaseReporter needs `source` or `leaseId`, to name leases as Leasehold does');
  const leaseIdOf = options.leaseId ?? ((key: string) => `${source}/${key}`);
  const maxPending = options.maxPendingRenewals ?? 10_000;
  const timeoutMs = options.timeoutMs ?? 5_000;
  const onError = options.onError ?? ((error: Error) => console.error(`[lease] reporter: ${error.message}`));
  const entries = new Map<string, Entry>();
  const stats: LeaseReporterStats = { sent: 0, dropped: 0, pending: 0, failedPosts: 0 };
  let flushing: Promise<void> | null = null;
  let closed = false;

  const dropOldest = () => {
    // Renewals are appended in time order, so the oldest one is at the front of some entry.
    while (stats.pending > maxPending) {
      let oldest: Entry | undefined;
      for (const entry of entries.values()) {
        if (entry.renewals.length > 0 && (!oldest || entry.renewals[0]!.at < oldest.renewals[0]!.at)) oldest = entry;
      }
      if (!oldest) return;
      const removed = oldest.renewals.splice(0, Math.min(stats.pending - maxPending, oldest.renewals.length)).length;
      stats.pending -= removed;
      stats.dropped += removed;
    }
  };

  const listener: LeaseTimingListener = (timing: LeaseTiming) => {
    const lease = leaseIdOf(timing.key);
    if (lease === null) return;
    const id = `${timing.holder}\u0000${lease}`;
    let entry = entries.get(id);
    if (!entry) {
      // A refused acquire by a holder that never held the lease is not worth a report.
      if (timing.outcome === 'busy') return;
      entry = { lease, holder: timing.holder, token: null, claimUntil: null, reportedClaims: null, renewals: [] };
      entries.set(id, entry);
    }
    if (timing.token !== null) entry.token = timing.token;
    entry.claimUntil = timing.claims ? timing.claimUntil : null;
    if (timing.call === 'renew') {
      entry.renewals.push({ at: timing.at.toISOString(), rttMs: round1(timing.rttMs), lateMs: timing.lateMs === null ? null : round1(timing.lateMs), ok: timing.outcome === 'ok' });
      stats.pending += 1;
      if (stats.pending > maxPending) dropOldest();
    }
  };

  /** The batches to send now, each within the endpoint's limits; the renewals leave their entries. */
  const take = (): TelemetryReport[][] => {
    const now = monotonicNow();
    const batches: TelemetryReport[][] = [];
    let batch: TelemetryReport[] = [];
    let renewalsInBatch = 0;
    let bytesInBatch = 20;
    const closeBatch = () => {
      if (batch.length > 0) batches.push(batch);
      batch = [];
      renewalsInBatch = 0;
      bytesInBatch = 20;
    };
    for (const [id, entry] of entries) {
      const claims = entry.claimUntil !== null && now < entry.claimUntil;
      if (!claims) entry.claimUntil = null;
      if (entry.renewals.length === 0 && !claims && entry.reportedClaims === false) {
        entries.delete(id);
        continue;
      }
      const renewals = entry.renewals.splice(0);
      stats.pending -= renewals.length;
      const head = { lease: entry.lease, holder: entry.holder, token: entry.token === null ? null : entry.token.toString(), claims };
      const headBytes = JSON.stringify(head).length + 20;
      if (headBytes > BATCH_BYTES / 2) {
        // A lease id or holder this long cannot be reported within the endpoint's limit.
        entries.delete(id);
        stats.dropped += renewals.length;
        onError(new Error(`the lease ${entry.lease.slice(0, 80)}... is too long to report (${headBytes} bytes); its renewals are dropped`));
        continue;
      }
      let from = 0;
      for (;;) {
        if (renewalsInBatch >= TELEMETRY_MAX_RENEWALS || bytesInBatch + headBytes > BATCH_BYTES) closeBatch();
        const part: ReportedRenewal[] = [];
        let bytes = headBytes;
        while (from < renewals.length && renewalsInBatch + part.length < TELEMETRY_MAX_RENEWALS) {
          const size = JSON.stringify(renewals[from]).length + 1;
          if (bytesInBatch + bytes + size > BATCH_BYTES) break;
          part.push(renewals[from]!);
          bytes += size;
          from += 1;
        }
        batch.push({ ...head, renewals: part });
        renewalsInBatch += part.length;
        bytesInBatch += bytes;
        if (from >= renewals.length) break;
        closeBatch();
      }
      entry.reportedClaims = claims;
    }
    closeBatch();
    return batches;
  };

  /** Puts the renewals of a batch that could not be delivered back in front of their entries. */
  const putBack = (batch: TelemetryReport[]) => {
    for (const report of [...batch].reverse()) {
      const id = `${report.holder}\u0000${report.lease}`;
      let entry = entries.get(id);
      if (!entry) {
        entry = { lease: report.lease, holder: report.holder, token: report.token === null ? null : BigInt(report.token), claimUntil: null, reportedClaims: null, renewals: [] };
        entries.set(id, entry);
      }
      entry.renewals.unshift(...report.renewals);
      stats.pending += report.renewals.length;
      // Leasehold has not heard this claim: say it again next time.
      entry.reportedClaims = null;
    }
    dropOldest();
  };

  /** Posts one batch: sent, refused (dropped, said why), or failed with the reason (kept for later). */
  const post = async (batch: TelemetryReport[]): Promise<{ outcome: 'sent' | 'refused' } | { outcome: 'failed'; reason: string }> => {
    const count = batch.reduce((sum, report) => sum + report.renewals.length, 0);
    try {
      const response = await fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${options.token}` },
        body: JSON.stringify({ reports: batch }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await response.text().catch(() => '');
      if (response.ok) {
        stats.sent += count;
        return { outcome: 'sent' };
      }
      stats.failedPosts += 1;
      const said = describeAnswer(text);
      if (response.status >= 400 && response.status < 500 && response.status !== 429) {
        stats.dropped += count;
        onError(new Error(`Leasehold refused ${count} renewals (HTTP ${response.status}): ${said}; they are dropped`));
        return { outcome: 'refused' };
      }
      return { outcome: 'failed', reason: `Leasehold answered HTTP ${response.status} (${said})` };
    } catch (error) {
      stats.failedPosts += 1;
      return { outcome: 'failed', reason: `Leasehold at ${endpoint} could not be reached: ${(error as Error).message}` };
    }
  };

  const flushNow = async () => {
    const batches = take();
    for (let i = 0; i < batches.length; i++) {
      const answer = await post(batches[i]!);
      if (answer.outcome === 'failed') {
        // Leasehold is not answering: keep this batch and the rest for the next flush.
        // Newest first, since each goes back in front of what is there.
        for (const rest of batches.slice(i).reverse()) putBack(rest);
        onError(new Error(`${answer.reason}; ${stats.pending} renewals are kept for the next flush`));
        return;
      }
    }
  };

  const flush = (): Promise<void> => {
    // One flush at a time; a second caller waits for the one running, then runs its own.
    const run = (flushing ?? Promise.resolve()).then(flushNow);
    const current = run.finally(() => {
      if (flushing === current) flushing = null;
    });
    flushing = current;
    return current;
  };

  const timer = setInterval(() => void flush().catch((error: Error) => onError(error)), options.flushEveryMs ?? 5_000);
  timer.unref();

  return {
    listener,
    flush,
    stats: () => ({ ...stats }),
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      await flush();
    },
  };
}

/** The answer's `error` (Leasehold's error shape) or the start of its text, for a message. */
function describeAnswer(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: unknown };
    if (typeof parsed.error === 'string') return parsed.error.slice(0, 300);
  } catch {
    // not JSON
  }
  return text.length === 0 ? 'no body' : text.slice(0, 120);
}
