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
//                   "claims": true|false, "claimForMs": n, "renewals": [{ "at": "<ISO>", "rttMs": n, "lateMs": n|null, "ok": bool }] }] }
// with at most 1,000 reports, 1,000 renewals and well under 1 MB a request. A lease the holder believes it
// holds is reported at every flush, renewals or not, with how much longer it believes so
// (`claimForMs`), so that Leasehold can compare the claim with the backend; a claim that
// starts or ends is sent at once, and an end is reported once, as false.
//
// Leasehold unreachable or answering 429/5xx: the renewals are kept (the newest
// `maxPendingRenewals`, the oldest dropped and counted) and sent with the next flush. A 4xx
// other than 429 names something wrong with the report itself: that batch is dropped and the
// answer handed to onError, since sending it again would be refused again; after a 422 (a
// lease Leasehold does not observe) its reports are sent one by one, and the refused lease is
// left out for a second, then longer while it is refused again (up to a minute).
import { monotonicNow } from './deadline';
import { Pending, type LeaseReporterStats, type TelemetryReport } from './report-batches';
import type { LeaseTimingListener } from './timings';

export { TELEMETRY_MAX_BYTES, TELEMETRY_MAX_RENEWALS, type LeaseReporterStats, type ReportedRenewal, type TelemetryReport } from './report-batches';

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
  /**
   * A claim that starts or ends is posted at once, alone, rather than at the next flush
   * (default true): Leasehold's split_brain rule compares claims with the backend.
   */
  claimChangesAtOnce?: boolean;
  /** Renewals kept while Leasehold cannot be reached (default 10,000); older ones are dropped. */
  maxPendingRenewals?: number;
  /** Deadline of one post (default 5 s). */
  timeoutMs?: number;
  /** A post that failed, or an answer that refused a batch. Default: one line on stderr. */
  onError?: (error: Error) => void;
  /**
   * Instead of fetch: delivers one request's JSON body and answers with the HTTP status and
   * text (a custom HTTP client, or Leasehold in the same process as its embedded demo does).
   */
  send?: (body: string) => Promise<{ status: number; text: string }>;
};

/** The application's own word on a claim (LeaseReporter.claim). */
export type LeaseClaim = {
  key: string;
  holder: string;
  token: bigint | null;
  /** true: it acts as the holder now; false: it has stopped. */
  claims: boolean;
  /** How long this word stands without another (default 30 s). */
  forMs?: number;
};


export type LeaseReporter = {
  /** The listener to hand the client (`onTiming`). */
  readonly listener: LeaseTimingListener;
  /**
   * The application's own belief, beside the client's: an application that acts on a flag of
   * its own (an elector's isLeader read before a long step) says so, and Leasehold compares
   * that claim with the backend too. The holder claims while either says so.
   */
  claim(claim: LeaseClaim): void;
  /** Posts what is pending now; resolves when the posts have been answered. */
  flush(): Promise<void>;
  stats(): LeaseReporterStats;
  /** Stops the timer and posts what is left. */
  close(): Promise<void>;
};

const renewalsIn = (batch: TelemetryReport[]) => batch.reduce((sum, report) => sum + report.renewals.length, 0);

type PostAnswer = { outcome: 'sent' } | { outcome: 'refused'; status: number; said: string } | { outcome: 'failed'; reason: string };

/** Posts one batch: sent, refused (dropped, said why), or failed with the reason (to be kept for later). */
type Send = (body: string) => Promise<{ status: number; text: string }>;

/** fetch to Leasehold's endpoint, with the token and a deadline. */
const fetchTo =
  (endpoint: string, token: string, timeoutMs: number): Send =>
  async (body) => {
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    return { status: response.status, text: await response.text().catch(() => '') };
  };

async function postBatch(endpoint: string, send: Send, batch: TelemetryReport[], stats: LeaseReporterStats): Promise<PostAnswer> {
  const count = renewalsIn(batch);
  try {
    const { status, text } = await send(JSON.stringify({ reports: batch }));
    if (status >= 200 && status < 300) {
      stats.sent += count;
      return { outcome: 'sent' };
    }
    stats.failedPosts += 1;
    const said = describeAnswer(text);
    if (status >= 400 && status < 500 && status !== 429) return { outcome: 'refused', status, said };
    return { outcome: 'failed', reason: `Leasehold answered HTTP ${status} (${said})` };
  } catch (error) {
    stats.failedPosts += 1;
    return { outcome: 'failed', reason: `Leasehold at ${endpoint} could not be reached: ${(error as Error).message}` };
  }
}

/**
 * How long a lease Leasehold refused (422: not observed there) is left out of reports: 1 s
 * after the first refusal (a lease acquired a moment ago is observed within a poll), doubling
 * to a minute while it is refused again.
 */
const refusedLeaseMuteMs = (refusals: number) => Math.min(60_000, 1_000 * 2 ** Math.min(refusals - 1, 6));

export function createLeaseReporter(options: LeaseReporterOptions): LeaseReporter {
  const endpoint = new URL('/api/v1/telemetry', options.url).toString();
  const { source } = options;
  if (!options.leaseId && !source) throw new TypeError('createLeaseReporter needs `source` or `leaseId`, to name leases as Leasehold does');
  const leaseIdOf = options.leaseId ?? ((key: string) => `${source}/${key}`);
  const post = options.send ?? fetchTo(endpoint, options.token, options.timeoutMs ?? 5_000);
  const onError = options.onError ?? ((error: Error) => console.error(`[lease] reporter: ${error.message}`));
  const pending = new Pending(options.maxPendingRenewals ?? 10_000);
  let flushing: Promise<void> | null = null;
  let closed = false;

  /** A refused batch is dropped, said why; a 422 (a lease not observed there) sets that lease aside for a while (refusedLeaseMuteMs). */
  const refused = (batch: TelemetryReport[], answer: { status: number; said: string }) => {
    pending.stats.dropped += renewalsIn(batch);
    const refusals = answer.status === 422 && batch.length === 1 ? pending.mute(batch[0]!, (n) => Date.now() + refusedLeaseMuteMs(n)) : 0;
    // A claim on a lease acquired a moment ago, refused once because Leasehold has not read it
    // yet, is the usual case, not an error: it goes again in a second. Said when refused again.
    if (refusals === 1 && renewalsIn(batch) === 0) return;
    const reports = batch.length === 1 ? '1 report' : `${batch.length} reports`;
    onError(new Error(`Leasehold refused ${reports} with ${renewalsIn(batch)} renewals (HTTP ${answer.status}): ${answer.said}; they are dropped`));
  };

  const flushNow = async (onlyChangedClaims = false) => {
    const batches = pending.take(monotonicNow(), Date.now(), onError, onlyChangedClaims);
    await sendBatches(batches, { endpoint, post, pending, onError, refused });
  };

  const flush = (onlyChangedClaims = false): Promise<void> => {
    // One flush at a time; a second caller waits for the one running, then runs its own.
    const current = (flushing ?? Promise.resolve()).then(() => flushNow(onlyChangedClaims)).finally(() => {
      if (flushing === current) flushing = null;
    });
    flushing = current;
    return current;
  };

  // A tick while a flush still runs (a slow or hanging Leasehold) is skipped, not queued.
  const timer = setInterval(() => {
    if (flushing === null) void flush().catch((error: Error) => onError(error));
  }, options.flushEveryMs ?? 5_000);
  timer.unref();

  const soon = soonFlusher(flush, () => flushing, onError);
  const claimChanged = () => {
    if (!closed && options.claimChangesAtOnce !== false) soon.request();
  };

  return {
    listener: (timing) => {
      const lease = leaseIdOf(timing.key);
      if (lease !== null && pending.record(lease, timing, monotonicNow())) claimChanged();
    },
    claim: ({ key, holder, token, claims, forMs = 30_000 }) => {
      const lease = leaseIdOf(key);
      const now = monotonicNow();
      if (lease !== null && pending.claim(lease, holder, token, claims ? now + Math.max(0, forMs) : null, now, Date.now())) claimChanged();
    },
    flush: () => flush(),
    stats: () => ({ ...pending.stats }),
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      soon.cancel();
      await flush();
    },
  };
}

type Sending = {
  endpoint: string;
  post: Send;
  pending: Pending;
  onError: (error: Error) => void;
  refused: (batch: TelemetryReport[], answer: { status: number; said: string }) => void;
};

/** Posts the batches in order; what Leasehold could not take (unreachable, 5xx) goes back for the next flush. */
async function sendBatches(batches: TelemetryReport[][], { endpoint, post, pending, onError, refused }: Sending): Promise<void> {
  for (let i = 0; i < batches.length; i++) {
    const batch = batches[i]!;
    const answer = await postBatch(endpoint, post, batch, pending.stats);
    if (answer.outcome === 'failed') {
      // Leasehold is not answering: keep this batch and the rest for the next flush,
      // newest first, since each goes back in front of what is there.
      for (const rest of batches.slice(i).reverse()) pending.putBack(rest);
      onError(new Error(`${answer.reason}; ${pending.stats.pending} renewals are kept for the next flush`));
      return;
    }
    if (answer.outcome !== 'refused') continue;
    if (answer.status !== 422 || batch.length === 1) {
      refused(batch, answer);
      continue;
    }
    // Leasehold refuses a request whole when one report names a lease it does not observe
    // (yet, or any more): send the reports one by one, so that the others get through and
    // only that lease is set aside.
    for (const report of batch) {
      const alone = await postBatch(endpoint, post, [report], pending.stats);
      if (alone.outcome === 'refused') refused([report], alone);
      else if (alone.outcome === 'failed') pending.putBack([report]);
    }
  }
}

/**
 * A claim that starts or ends is sent at once, not at the next tick: Leasehold compares
 * claims with the backend, and a claim it heard of late would look like two holders. Only the
 * leases whose claim changed go (what is already heard waits for the tick); at most one such
 * flush waits at a time, behind the one running (a hanging Leasehold does not pile them up).
 */
function soonFlusher(flush: (onlyChangedClaims: boolean) => Promise<void>, running: () => Promise<void> | null, onError: (error: Error) => void) {
  let timer: NodeJS.Timeout | null = null;
  let queued = false;
  return {
    request() {
      if (timer || queued) return;
      timer = setTimeout(() => {
        timer = null;
        queued = true;
        const started = () => void (queued = false);
        void (running() ?? Promise.resolve()).then(started, started);
        void flush(true).catch((error: Error) => onError(error));
      }, 10);
      timer.unref();
    },
    cancel() {
      if (timer) clearTimeout(timer);
      timer = null;
    },
  };
}

/** The answer's `message` or `error` (Leasehold's error shape) or the start of its text, for a message. */
function describeAnswer(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: unknown; message?: unknown };
    if (typeof parsed.message === 'string') return parsed.message.slice(0, 300);
    if (typeof parsed.error === 'string') return parsed.error.slice(0, 300);
  } catch {
    // not JSON
  }
  return text.length === 0 ? 'no body' : text.slice(0, 120);
}
