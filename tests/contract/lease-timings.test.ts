// Holder-side timings (lib/lease/timings.ts) on every backend, on the real servers: each
// acquire, renew and release is timed with its outcome and what the holder believes after
// it; a renewal given its due time reports how late it ran; an elector whose event loop is
// blocked reports that block as lateness; leaseMetrics() and createLeaseReporter() carry the
// same figures to prom-client and to a receiver over loopback HTTP.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BackendUnavailableError,
  LeaseLostError,
  createLeaderElector,
  createLeaseClient,
  createLeaseReporter,
  leaseMetrics,
  type LeaseClient,
  type LeaseTiming,
  type TelemetryReport,
} from '../../lib/lease';
import { backendsUnderTest, type BackendUnderTest } from '../support/lease-backends';
import { startTcpProxy } from '../support/tcp-proxy';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const blockEventLoop = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy: nothing else in this process runs, as in a long GC pause or a synchronous loop
  }
};

describe.each(backendsUnderTest())('holder-side timings: $name', (backend: BackendUnderTest) => {
  const { ttlMs } = backend;
  const opened: LeaseClient[] = [];
  const client = (onTiming?: (t: LeaseTiming) => void) => {
    const created = createLeaseClient({ ...backend.options(), onTiming });
    opened.push(created);
    return created;
  };

  beforeAll(() => backend.setup());
  afterAll(async () => {
    await Promise.all(opened.splice(0).map((c) => c.close().catch(() => {})));
    await backend.teardown();
  });

  it('times acquire, renew and release with their outcomes, tokens and claims, and the lateness of a renewal past its due time', async () => {
    const seen: LeaseTiming[] = [];
    const a = client((t) => seen.push(t));
    const key = backend.key('timed');
    const lease = await a.acquire(key, { holder: 'timed', ttlMs });
    expect(lease).not.toBeNull();
    const dueAt = performance.now() - 120; // this renewal runs 120 ms behind its schedule
    const renewed = await a.renew(lease!, { dueAt });
    await a.renew(renewed);
    expect(await a.release(renewed)).toBe(true);

    expect(seen.map((t) => `${t.call} ${t.outcome} ${t.claims}`)).toEqual(['acquire ok true', 'renew ok true', 'renew ok true', 'release ok false']);
    for (const t of seen) {
      expect(t).toMatchObject({ backend: backend.name === 'redis-redlock' ? 'redis' : backend.name, key, holder: lease!.holder, token: lease!.token });
      expect(t.rttMs).toBeGreaterThan(0);
      expect(t.rttMs).toBeLessThan(5_000);
      expect(Math.abs(t.at.getTime() - Date.now())).toBeLessThan(10_000);
    }
    expect(seen[1]!.lateMs).toBeGreaterThanOrEqual(120);
    expect(seen[1]!.lateMs).toBeLessThan(1_000);
    expect(seen[2]!.lateMs).toBeNull();
    expect(seen[0]!.claimUntil).toBeGreaterThan(performance.now() - ttlMs);
    expect(seen[3]!.claimUntil).toBeNull();
  });

  it('reports a refused acquire as busy, and a renewal of a lease taken by another as lost, after which the holder claims nothing', async () => {
    const seen: LeaseTiming[] = [];
    const a = client((t) => seen.push(t));
    const b = client();
    const key = backend.key('lost');
    const lease = await a.acquire(key, { holder: 'first', ttlMs });
    expect(await b.acquire(key, { holder: 'second', ttlMs })).toBeNull();
    const watcher = client((t) => seen.push(t));
    expect(await watcher.acquire(key, { holder: 'third', ttlMs })).toBeNull();
    // Let a's lease run out, and b take it.
    const taken = await b.acquire(key, { holder: 'second', ttlMs, waitMs: ttlMs + backend.expiryGraceMs + 3_000, retryEveryMs: 50 });
    expect(taken).not.toBeNull();
    await expect(a.renew(lease!)).rejects.toBeInstanceOf(LeaseLostError);

    const mine = seen.filter((t) => t.holder === lease!.holder);
    expect(mine.map((t) => `${t.call} ${t.outcome} ${t.claims}`)).toEqual(['acquire ok true', 'renew lost false']);
    expect(mine[1]!.error).toBeInstanceOf(LeaseLostError);
    expect(seen.find((t) => t.holder.startsWith('third:'))).toMatchObject({ call: 'acquire', outcome: 'busy', claims: false, token: null });
  });

  it('a listener that throws breaks no call', async () => {
    const a = client(() => {
      throw new Error('listener bug');
    });
    const original = console.error;
    const printed: unknown[] = [];
    console.error = (...args: unknown[]) => void printed.push(args);
    try {
      const lease = await a.acquire(backend.key('throws'), { holder: 'h', ttlMs });
      expect(lease).not.toBeNull();
      expect(await a.release(lease!)).toBe(true);
    } finally {
      console.error = original;
    }
    expect(printed.length).toBeGreaterThan(0);
  });
});

describe('holder-side timings: an elector, prom-client and the reporter', () => {
  const redis = backendsUnderTest().find((b) => b.name === 'redis')!;
  const opened: LeaseClient[] = [];
  let receiver: Server;
  let receiverUrl: string;
  const posts: { reports: TelemetryReport[]; authorization: string | undefined }[] = [];
  let answer: { status: number; body: string } = { status: 202, body: '{"accepted":true}' };
  /** When set, the answer to each request, from what it carries (instead of `answer`). */
  let answerFor: ((reports: TelemetryReport[]) => { status: number; body: string }) | null = null;
  const requests: TelemetryReport[][] = [];

  const bodyOf = async (request: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  };

  beforeAll(async () => {
    await redis.setup();
    receiver = createServer((request, response) => {
      void bodyOf(request).then((body) => {
        const { reports } = JSON.parse(body) as { reports: TelemetryReport[] };
        requests.push(reports);
        const given = answerFor ? answerFor(reports) : answer;
        if (given.status < 300) posts.push({ reports, authorization: request.headers.authorization });
        response.writeHead(given.status, { 'content-type': 'application/json' }).end(given.body);
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await Promise.all(opened.splice(0).map((c) => c.close().catch(() => {})));
    await new Promise((resolve) => receiver.close(resolve));
  });

  it('an elector whose event loop is blocked for 1 s reports a renewal at least 1 s late, to the callback, to prom-client and through the reporter', async () => {
    posts.length = 0;
    answer = { status: 202, body: '{"accepted":true}' };
    const registry = new Registry();
    const seen: LeaseTiming[] = [];
    const reporter = createLeaseReporter({ url: receiverUrl, token: 'lh_reporter_secret', source: 'orders-redis', flushEveryMs: 60_000, claimChangesAtOnce: false });
    const client = createLeaseClient({ ...redis.options(), onTiming: [(t) => seen.push(t), leaseMetrics({ registry }), reporter.listener] });
    opened.push(client);
    const key = redis.key('elector');
    const controller = new AbortController();
    const leading = new Promise<void>((resolve) => {
      const elector = createLeaderElector({ client, key, holder: 'scheduler', ttlMs: 3_000, renewEveryMs: 300, onStartedLeading: () => resolve() });
      void elector.run(controller.signal);
    });
    await leading;
    await sleep(700); // two renewals on time
    blockEventLoop(1_000);
    await sleep(700); // the late renewal, then one on time
    controller.abort();
    await sleep(200);

    const renewals = seen.filter((t) => t.call === 'renew');
    expect(renewals.length).toBeGreaterThanOrEqual(3);
    expect(renewals.every((t) => t.outcome === 'ok' && t.lateMs !== null)).toBe(true);
    const late = renewals.filter((t) => t.lateMs! >= 1_000 - 300);
    expect(late).toHaveLength(1);
    // The block started at most one renew interval after the sleep did: lateness ≥ 1 s − 300 ms,
    // and the renewals around it ran on time.
    expect(renewals.filter((t) => t.lateMs! < 100).length).toBeGreaterThanOrEqual(2);

    const text = await registry.metrics();
    expect(text).toMatch(new RegExp(`lease_call_duration_seconds_count\\{backend="redis",call="renew",outcome="ok",lease="${key}"\\} ${renewals.length}`));
    expect(text).toMatch(new RegExp(`lease_renewal_lateness_seconds_bucket\\{le="0\\.5",backend="redis",lease="${key}"\\} ${renewals.length - 1}\\b`));
    expect(text).toMatch(new RegExp(`lease_renewal_lateness_seconds_bucket\\{le="1",backend="redis",lease="${key}"\\} ${renewals.length}\\b`));
    // The elector resigned when aborted: it claims the lease no more.
    expect(text).toMatch(new RegExp(`lease_claimed\\{backend="redis",lease="${key}"\\} 0`));

    await reporter.close();
    const reports = posts.flatMap((p) => p.reports);
    expect(posts[0]!.authorization).toBe('Bearer lh_reporter_secret');
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ lease: `orders-redis/${key}`, holder: renewals[0]!.holder, token: renewals[0]!.token!.toString(), claims: false });
    expect(reports[0]!.renewals).toHaveLength(renewals.length);
    expect(Math.max(...reports[0]!.renewals.map((r) => r.lateMs!))).toBeGreaterThanOrEqual(700);
    expect(reports[0]!.renewals.every((r) => r.ok && typeof r.rttMs === 'number' && !Number.isNaN(Date.parse(r.at)))).toBe(true);
  });

  it('the reporter says a held lease is claimed at every flush, and its end once, as false', async () => {
    posts.length = 0;
    answer = { status: 202, body: '{"accepted":true}' };
    const reporter = createLeaseReporter({ url: receiverUrl, token: 't', leaseId: (key) => `r/${key}`, flushEveryMs: 60_000, claimChangesAtOnce: false });
    const client = createLeaseClient({ ...redis.options(), onTiming: reporter.listener });
    opened.push(client);
    const key = redis.key('claims');
    const lease = await client.acquire(key, { holder: 'h', ttlMs: 5_000 });
    await reporter.flush();
    await reporter.flush();
    await client.release(lease!);
    await reporter.flush();
    await reporter.flush();
    expect(posts.map((p) => p.reports.map((r) => `${r.claims} ${r.renewals.length}`).join())).toEqual(['true 0', 'true 0', 'false 0']);
    await reporter.close();
  });

  it("the reporter sends a claim's start and end at once, with how much longer the holder believes it holds, and takes the application's own word beside the client's", async () => {
    posts.length = 0;
    answer = { status: 202, body: '{}' };
    const reporter = createLeaseReporter({ url: receiverUrl, token: 't', source: 's', flushEveryMs: 60_000 });
    const client = createLeaseClient({ ...redis.options(), onTiming: reporter.listener });
    opened.push(client);
    const key = redis.key('claim-now');
    const posted = async (count: number) => {
      for (let i = 0; i < 100 && posts.length < count; i++) await sleep(20);
      expect(posts).toHaveLength(count);
      return posts[count - 1]!.reports;
    };
    const lease = (await client.acquire(key, { holder: 'h', ttlMs: 5_000 }))!;
    // No flush was called, and the tick is a minute away: the start went by itself.
    const [start] = await posted(1);
    expect(start).toMatchObject({ lease: `s/${key}`, holder: lease.holder, token: lease.token.toString(), claims: true });
    expect(start!.claimForMs).toBeGreaterThan(3_000);
    expect(start!.claimForMs).toBeLessThanOrEqual(5_000);
    await client.release(lease);
    const [end] = await posted(2);
    expect(end).toMatchObject({ claims: false });
    expect(end).not.toHaveProperty('claimForMs');
    // The application says it still acts as the holder (a zombie's own belief): sent at once too, and its end.
    reporter.claim({ key, holder: lease.holder, token: lease.token, claims: true, forMs: 3_000 });
    const [word] = await posted(3);
    expect(word).toMatchObject({ claims: true, token: lease.token.toString() });
    expect(word!.claimForMs).toBeGreaterThan(2_800);
    reporter.claim({ key, holder: lease.holder, token: lease.token, claims: false });
    expect((await posted(4))[0]).toMatchObject({ claims: false });
    // Only what changed goes at once: nothing else was sent in between.
    expect(posts.every((p) => p.reports.length === 1)).toBe(true);
    await reporter.close();
  });

  it('the reporter splits more than 1,000 renewals into requests of at most 1,000, keeps them while the receiver answers 503, and drops a batch it refuses with 400, saying why', async () => {
    posts.length = 0;
    const errors: string[] = [];
    const reporter = createLeaseReporter({ url: receiverUrl, token: 't', source: 's', flushEveryMs: 60_000, claimChangesAtOnce: false, onError: (e) => errors.push(e.message) });
    const client = createLeaseClient({ ...redis.options(), onTiming: reporter.listener });
    opened.push(client);
    const key = redis.key('many');
    let lease = (await client.acquire(key, { holder: 'h', ttlMs: 30_000 }))!;
    for (let i = 0; i < 2_500; i++) lease = await client.renew(lease, { dueAt: performance.now() });

    answer = { status: 503, body: '{"error":"the store is not ready"}' };
    await reporter.flush();
    expect(posts).toHaveLength(0);
    expect(reporter.stats()).toMatchObject({ sent: 0, pending: 2_500, dropped: 0 });
    expect(errors.at(-1)).toMatch(/HTTP 503 \(the store is not ready\); 2500 renewals are kept/);

    answer = { status: 202, body: '{}' };
    await reporter.flush();
    expect(posts.map((p) => p.reports.reduce((n, r) => n + r.renewals.length, 0))).toEqual([1_000, 1_000, 500]);
    expect(posts.every((p) => JSON.stringify(p.reports).length < 1_000_000)).toBe(true);
    expect(reporter.stats()).toMatchObject({ sent: 2_500, pending: 0, dropped: 0 });
    // In the order they were made, none twice.
    const ats = posts.flatMap((p) => p.reports.flatMap((r) => r.renewals.map((x) => x.at)));
    expect(ats).toEqual([...ats].sort());

    for (let i = 0; i < 10; i++) lease = await client.renew(lease);
    answer = { status: 400, body: '{"error":"reports[0].lease: no lease s/x is known"}' };
    await reporter.flush();
    expect(reporter.stats()).toMatchObject({ sent: 2_500, pending: 0, dropped: 10 });
    expect(errors.at(-1)).toBe('Leasehold refused 1 report with 10 renewals (HTTP 400): reports[0].lease: no lease s/x is known; they are dropped');
    await client.release(lease);
    answer = { status: 202, body: '{}' };
    await reporter.close();
  });

  it('the reporter keeps at most maxPendingRenewals while the receiver is unreachable, dropping the oldest', async () => {
    const errors: string[] = [];
    // A loopback port nothing listens on: connection refused.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const reporter = createLeaseReporter({ url: `http://127.0.0.1:${port}`, token: 't', source: 's', flushEveryMs: 60_000, claimChangesAtOnce: false, maxPendingRenewals: 100, onError: (e) => errors.push(e.message) });
    const client = createLeaseClient({ ...redis.options(), onTiming: reporter.listener });
    opened.push(client);
    let lease = (await client.acquire(redis.key('unreachable'), { holder: 'h', ttlMs: 30_000 }))!;
    for (let i = 0; i < 150; i++) lease = await client.renew(lease);
    await reporter.flush();
    expect(reporter.stats()).toMatchObject({ sent: 0, pending: 100, dropped: 50, failedPosts: 1 });
    expect(errors[0]).toMatch(new RegExp(`^Leasehold at http://127\\.0\\.0\\.1:${port}/api/v1/telemetry could not be reached: .*; 100 renewals are kept`));
    await client.release(lease);
    // close() tries once more and gives up without throwing.
    await reporter.close();
  });

  it('the reporter sends at most 1,000 reports a request, and when Leasehold refuses one lease (422) the others still get through and that lease is set aside', async () => {
    posts.length = 0;
    requests.length = 0;
    const errors: string[] = [];
    const reporter = createLeaseReporter({ url: receiverUrl, token: 't', source: 's', flushEveryMs: 60_000, claimChangesAtOnce: false, onError: (e) => errors.push(e.message) });
    const client = createLeaseClient({ ...redis.options(), onTiming: reporter.listener });
    opened.push(client);
    const prefix = redis.key('wide');
    const leases = [];
    for (let i = 0; i < 1_001; i++) leases.push((await client.acquire(`${prefix}:${i}`, { holder: 'h', ttlMs: 30_000 }))!);
    // The last of the first request: it is set aside when the first flush ends, not while it still runs.
    const unknown = `s/${prefix}:999`;
    answerFor = (reports) =>
      reports.some((r) => r.lease === unknown)
        ? { status: 422, body: JSON.stringify({ error: 'unknown_lease', message: `reports[0].lease: no lease "${unknown}" is observed by this Leasehold` }) }
        : { status: 202, body: '{}' };
    try {
      await reporter.flush();
      // 1,000 and 1; the first refused whole, then sent one by one: 999 taken, the unknown one refused.
      expect(requests.slice(0, 2).map((r) => r.length)).toEqual([1_000, 1]);
      expect(requests.every((r) => r.length <= 1_000)).toBe(true);
      const taken = posts.flatMap((p) => p.reports.map((r) => r.lease));
      expect(taken).toHaveLength(1_000);
      expect(taken).not.toContain(unknown);
      // Refused once with nothing but its claim: a lease Leasehold has not read yet, the usual case; not said.
      expect(errors).toEqual([]);
      // Set aside: the next flush sends every other claimed lease again, not that one.
      requests.length = 0;
      await reporter.flush();
      expect(requests.flat().map((r) => r.lease)).not.toContain(unknown);
      expect(requests.flat()).toHaveLength(1_000);
      // A second later it is tried again, refused again, and that is said.
      await sleep(1_100);
      await reporter.flush();
      expect(requests.flat().map((r) => r.lease)).toContain(unknown);
      expect(errors).toEqual([expect.stringMatching(/^Leasehold refused 1 report with 0 renewals \(HTTP 422\): reports\[0\]\.lease: no lease/)]);
    } finally {
      answerFor = null;
      for (const lease of leases) await client.release(lease);
      await reporter.close();
    }
  });

  it('a renewal whose answer is lost leaves the claim standing only until its time runs out', async () => {
    const seen: LeaseTiming[] = [];
    const proxy = await startTcpProxy('127.0.0.1', redis.targets()[0]!.port);
    const client = createLeaseClient({ ...redis.options([{ host: '127.0.0.1', port: proxy.port }], 300), onTiming: (t) => seen.push(t) });
    opened.push(client);
    try {
      const lease = (await client.acquire(redis.key('lost-answer'), { holder: 'h', ttlMs: 1_000 }))!;
      proxy.partition(true);
      await expect(client.renew(lease)).rejects.toBeInstanceOf(BackendUnavailableError);
      await sleep(1_000);
      await expect(client.renew(lease)).rejects.toBeInstanceOf(BackendUnavailableError);
      expect(seen.map((t) => `${t.call} ${t.outcome} ${t.claims}`)).toEqual(['acquire ok true', 'renew unavailable true', 'renew unavailable false']);
    } finally {
      proxy.partition(false);
      await proxy.close();
    }
  });
});
