// One chaos scenario's world: a store, a collector observing real backends with alerts on and a
// real receiver, lease holders renewing through lib/lease, and an operator force-expiring
// leases through lib/admin, as the console's route does. A fault is injected between
// `fault.begin()` and `fault.recovered()`; `fault.check()` then counts, from the store, the
// receiver and the backends, what the issue says must hold (docs/reliability.md), and fails
// the test when anything was invented, lost, written twice or applied twice.
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { ADMIN_ACTIONS } from '../../lib/admin/actions';
import { forceBody } from '../../lib/admin/force-request';
import { runForceAction } from '../../lib/admin/guarded-force';
import { readDeadlineMs } from '../../lib/collector/read-lanes';
import { generateWebhookSecret } from '../../lib/alerts/deliver/secret';
import type { SourceConfig } from '../../lib/config';
import { createWebhook } from '../../lib/db/webhooks';
import { openStore, type Store } from '../../lib/db/store';
import { createLeaseClient, LeaseLostError, type Lease, type LeaseClient, type LeaseClientOptions } from '../../lib/lease';
import { createParts } from '../../lib/parts';
import type { Collector } from '../../lib/collector';
import { principal } from '../support/admin-fixtures';
import { testCollector } from '../support/collector';
import { createPostgresDatabase } from '../support/databases';
import { ROOT } from '../support/services';
import { startReceiver, type Receiver } from '../support/webhook-receiver';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export const uid = () => randomBytes(3).toString('hex');

/** Polls `value` until `done` holds of it (expect.poll, usable in hooks too); fails naming `what` and the last value. */
export async function until<T>(what: string, value: () => Promise<T>, done: (v: T) => boolean, { timeout = 20_000, interval = 100 } = {}): Promise<T> {
  const deadline = Date.now() + timeout;
  for (;;) {
    const v = await value();
    if (done(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeout} ms (last: ${JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x))})`);
    await sleep(interval);
  }
}

/** The poll interval of every chaos collector: "two polls" is one second. */
export const POLL_MS = 500;
/** Holders' TTL: longer than any fault, so that no lease really expires while its backend is away. */
export const HOLD_TTL_MS = 40_000;
const RENEW_EVERY_MS = 1_000;
const REASON = 'chaos suite: the operator forces this lease during a fault';

/** Events a lease that stayed held by one holder must never get. */
const INVENTED_EVENTS = ['expired', 'released', 'taken_over', 'token_regression', 'observation_gap'];
/** Alerts that would say a steady lease lost its holder. */
const INVENTED_ALERTS = ['missed_renewal', 'failover', 'leaderless', 'token_regression', 'flapping'];

/** A backend's leases as lib/lease takes them, and the store's id for each key. */
export type Layout = { source: string; client: LeaseClientOptions; key(label: string): string; leaseId(key: string): string };

export type Holder = {
  layout: Layout;
  key: string;
  leaseId: string;
  lease: Lease;
  client: LeaseClient;
  /** Renewals that failed (the backend away) and that succeeded. */
  failures: number;
  renewals: number;
  /** The lease is no longer this holder's (forced): it stopped renewing. */
  lost: boolean;
  stop(): Promise<void>;
};

export type ActionOutcome = 'done' | 'refused' | 'unknown';
type Attempt = { leaseId: string; outcome: ActionOutcome; status: number | null; previousToken: string | null; newToken: string | null };

export type FaultRow = {
  fault: string;
  seconds: number;
  steadyLeases: number;
  eventsChecked: number;
  invented: number;
  staleSeen: string;
  sourceDown: number;
  sourceUp: number;
  resumedMs: number | null;
  writtenTwice: number;
  alerts: number;
  webhookIds: number;
  receipts: number;
  actions: string;
  auditedOnce: boolean;
};

export type WorldOptions = {
  sources: SourceConfig[];
  /** The store's database (default: a new one on the test services' PostgreSQL). */
  storeUrl?: string;
  /** A collector id (two collectors in one test need different ones). */
  collectorId?: string;
  /** No collector of the world's own (the test runs its own, in other processes). */
  noCollector?: boolean;
  timeoutMs?: number;
};

export type World = Awaited<ReturnType<typeof startWorld>>;
/** What a fault's checks read of its world. */
type Watched = { store: Store; receiver: Receiver; webhookId: string; holders: Holder[]; observed(held: Holder[], timeout?: number): Promise<void> };

export async function startWorld(options: WorldOptions) {
  const db = options.storeUrl ? null : await createPostgresDatabase('lh_chaos');
  const storeUrl = options.storeUrl ?? db!.url;
  const store: Store = await openStore({ kind: 'postgres', url: storeUrl });
  let secret: string | null = generateWebhookSecret();
  const receiver: Receiver = await startReceiver(() => secret);
  const webhook = await createWebhook(store, { name: `chaos-${uid()}`, url: receiver.url, format: 'native', secret, routingKey: null, rules: [] });
  const parts = createParts();
  const holders: Holder[] = [];
  const attempts: Attempt[] = [];
  const collectors: Collector[] = [];
  const startCollectorHere = (collectorId = options.collectorId) => {
    const collector = testCollector(store, options.sources, {
      pollMs: POLL_MS,
      collectorId,
      // Deliveries retried from 200 ms growing to 6 s (not 1 s to 5 min), 1 s to answer: the
      // receiver's faults last a minute at most. The delays have full jitter, so at the cap a
      // retry comes after 3 s on average: 30 attempts spent about 80 s, and now and then (about
      // one run in twenty) under the minute of 500s, which dead-lettered a message; 60 last
      // about two and a half minutes.
      alerts: { timeoutMs: options.timeoutMs ?? 1_000, maxAttempts: 60 },
      alertRetryBaseMs: 200,
      alertRetryMaxMs: 6_000,
    });
    collectors.push(collector);
    return collector;
  };
  if (!options.noCollector) startCollectorHere();

  const world = {
    store,
    storeUrl,
    receiver,
    webhookId: webhook.id,
    sources: options.sources,
    holders,
    collectors,
    startCollector: startCollectorHere,

    /** A lease taken through lib/lease and renewed every second until stopped (or lost). */
    async hold(layout: Layout, label: string): Promise<Holder> {
      const client = createLeaseClient(layout.client);
      const key = layout.key(`${label}-${uid()}`);
      const lease = await client.acquire(key, { holder: label, ttlMs: HOLD_TTL_MS, waitMs: 10_000 }).catch(async (error: unknown) => {
        await client.close().catch(() => {});
        throw error;
      });
      if (!lease) {
        await client.close().catch(() => {});
        throw new Error(`could not take ${key}`);
      }
      const stopping = new AbortController();
      const holder: Holder = {
        layout,
        key,
        leaseId: layout.leaseId(key),
        lease,
        client,
        failures: 0,
        renewals: 0,
        lost: false,
        async stop() {
          stopping.abort();
          await renewing;
          await client.close().catch(() => {});
        },
      };
      const renewing = (async () => {
        while (!stopping.signal.aborted && !holder.lost) {
          await sleep(RENEW_EVERY_MS);
          if (stopping.signal.aborted) break;
          try {
            holder.lease = await client.renew(holder.lease, { signal: AbortSignal.timeout(2_000) });
            holder.renewals++;
          } catch (error) {
            if (error instanceof LeaseLostError) holder.lost = true;
            else holder.failures++;
          }
        }
      })();
      holders.push(holder);
      return holder;
    },

    /** Waits until the store shows every one of these held by its holder, read fresh. */
    async observed(held: Holder[], timeout = 20_000) {
      await until(
        'the store shows every lease held by its holder, fresh',
        async () => {
          const rows = await store.prisma.lease.findMany({ where: { id: { in: held.map((h) => h.leaseId) } } });
          return held.filter((h) => !rows.some((r) => r.id === h.leaseId && r.state === 'held' && r.holder === h.lease.holder && !r.stale)).map((h) => h.leaseId);
        },
        (missing) => missing.length === 0,
        { timeout },
      );
    },

    /**
     * The operator force-expires `holder`'s lease through lib/admin, with the holder and token
     * the store shows (what the console would show them), and says how it ended.
     */
    async forceExpire(holder: Holder, seen: { holder: string; token: string } = { holder: holder.lease.holder, token: holder.lease.token.toString() }): Promise<ActionOutcome> {
      const body = forceBody.parse({ expectedHolder: seen.holder, expectedToken: seen.token, reason: REASON });
      try {
        const done = await runForceAction(ADMIN_ACTIONS['force-expire'], { store, leaseId: holder.leaseId, body, principal: principal('operator'), sources: options.sources, root: parts });
        if (done.dryRun) throw new Error('not a dry run');
        attempts.push({ leaseId: holder.leaseId, outcome: 'done', status: 200, previousToken: done.previousToken, newToken: done.newToken });
        return 'done';
      } catch (error) {
        const status = (error as { status?: number }).status ?? null;
        // 409 and 422: refused (audited); 503: the backend's answer was lost, so whether it was applied is unknown.
        if (status !== 409 && status !== 422 && status !== 503) throw error;
        const outcome: ActionOutcome = status === 503 ? 'unknown' : 'refused';
        attempts.push({ leaseId: holder.leaseId, outcome, status, previousToken: null, newToken: null });
        return outcome;
      }
    },

    /** A fault, from begin() to recovered(), then checked. */
    fault(name: string, expect_: FaultExpectation) {
      return new Fault(world, name, expect_, attempts);
    },

    async stop() {
      await Promise.allSettled(holders.map((h) => h.stop()));
      await Promise.allSettled(collectors.map((c) => c.stop()));
      await parts.stopAll();
      secret = null;
      await receiver.close();
      await store.close();
      await db?.drop();
    },
  };
  return world;
}

export type FaultExpectation = {
  /** The source the fault is on ('' when none is). */
  source: string;
  /** The source cannot be read during the fault: its leases stale, one source_down and one source_up. */
  down: boolean;
  /** Steady holders whose leases are checked (default: every holder of the source that was not forced). */
  steady?: Holder[];
  /**
   * While down, the backend hangs rather than refuses (etcd without a quorum answers no read):
   * a read in flight when it comes back may first run out its deadline (readDeadlineMs), so
   * history resumes within that deadline and two polls, not two polls alone.
   */
  hangs?: boolean;
};

class Fault {
  private beganAt = 0;
  private recoveredAt = 0;
  private readonly attemptsBefore: number;
  private stale: { seen: number; rightLastRead: number; of: number } = { seen: 0, rightLastRead: 0, of: 0 };
  /** The source's last event before the fault: its events after are the fault's. */
  private seqBefore = 0;

  constructor(
    private readonly world: Watched,
    readonly name: string,
    private readonly expectation: FaultExpectation,
    private readonly attempts: Attempt[],
  ) {
    this.attemptsBefore = attempts.length;
  }

  private steady(): Holder[] {
    return this.expectation.steady ?? this.world.holders.filter((h) => h.layout.source === this.expectation.source && !h.lost && !this.forced(h));
  }

  private forced(h: Holder) {
    return this.attempts.some((a) => a.leaseId === h.leaseId);
  }

  private async sourceRow() {
    return this.world.store.prisma.source.findUnique({ where: { name: this.expectation.source } });
  }

  async begin() {
    const row = this.expectation.source ? await this.sourceRow() : null;
    this.seqBefore = row?.lastSeq ?? 0;
    this.beganAt = Date.now();
  }

  /**
   * While the source is away: waits until the store says it is down, then checks that every
   * steady lease is stale and shows the holder and token it had, read before the fault.
   */
  async whileDown(timeout = 15_000) {
    const { store } = this.world;
    await until(`${this.expectation.source} shown down`, async () => (await this.sourceRow())?.status, (status) => status === 'down', { timeout });
    const steady = this.steady();
    // The read that found it down began at its source_down's time: every lease shows what was read before it.
    const down = await store.prisma.sourceEvent.findFirst({ where: { sourceName: this.expectation.source, type: 'source_down', seq: { gt: this.seqBefore } } });
    const downAt = down?.at.getTime() ?? Date.now();
    const rows = await store.prisma.lease.findMany({ where: { id: { in: steady.map((h) => h.leaseId) } } });
    this.stale.of = steady.length;
    this.stale.seen = rows.filter((r) => r.stale).length;
    this.stale.rightLastRead = rows.filter((r) => {
      const h = steady.find((x) => x.leaseId === r.id)!;
      return r.stale && r.observedAt.getTime() <= downAt && r.holder === h.lease.holder && r.token?.toString() === h.lease.token.toString();
    }).length;
    expect(this.stale.seen, 'every steady lease of a source that cannot be read is stale').toBe(steady.length);
    expect(this.stale.rightLastRead, 'a stale lease shows what the last read before the fault saw').toBe(steady.length);
  }

  /** The backend answers again (`at`: when it was seen answering, if measured apart). */
  recovered(at = Date.now()) {
    this.recoveredAt = at;
  }

  /**
   * After recovery: history resumed (a good read of the source begun after it came back, and its
   * leases fresh), every delivery settled, then the counts. Returns the table's row.
   */
  async check(): Promise<FaultRow> {
    const { store, receiver, webhookId } = this.world;
    const source = this.expectation.source;
    const steady = this.steady();
    let resumedMs: number | null = null;
    if (source) {
      await until(`${source} read again after recovery`, () => this.sourceRow(), (r) => r?.status === 'up' && (r.lastGoodReadAt?.getTime() ?? 0) > this.recoveredAt, { interval: 25 });
      await this.world.observed(steady, 10_000);
      // source_up is stamped when the read that proved the source back ended: how long after it came back its history resumed.
      const up = await store.prisma.sourceEvent.findFirst({ where: { sourceName: source, type: 'source_up', seq: { gt: this.seqBefore } }, orderBy: { seq: 'desc' } });
      resumedMs = up ? up.at.getTime() - this.recoveredAt : null;
    }
    // Every delivery made so far is settled: delivered (none pending, none given up).
    await until('every delivery delivered', () => store.prisma.webhookDelivery.count({ where: { webhookId, status: { not: 'delivered' } } }), (n) => n === 0, { timeout: 60_000, interval: 200 });
    const endedAt = Date.now();

    // 1. Nothing invented on the steady leases: no expiry, release, takeover, regression or gap, no alert saying so.
    const events = await store.prisma.leaseEvent.findMany({ where: { leaseId: { in: steady.map((h) => h.leaseId) } }, orderBy: [{ leaseId: 'asc' }, { seq: 'asc' }] });
    const invented = events.filter((e) => INVENTED_EVENTS.includes(e.type));
    const inventedAlerts = await store.prisma.alert.findMany({ where: { leaseId: { in: steady.map((h) => h.leaseId) }, ruleType: { in: INVENTED_ALERTS } } });
    expect(invented.map((e) => `${e.leaseId} ${e.type}`), 'no expiry, release or takeover invented').toEqual([]);
    expect(inventedAlerts.map((a) => `${a.leaseId} ${a.ruleType}`), 'no missed_renewal, failover or leaderless alert invented').toEqual([]);
    for (const h of steady) expect(events.filter((e) => e.leaseId === h.leaseId).map((e) => e.type), h.leaseId).toEqual(['acquired']);

    // 2. The source went down and came back once each (or not at all when the fault left it readable).
    const sourceEvents = source ? await store.prisma.sourceEvent.findMany({ where: { sourceName: source, seq: { gt: this.seqBefore } }, orderBy: { seq: 'asc' } }) : [];
    const downs = sourceEvents.filter((e) => e.type === 'source_down').length;
    const ups = sourceEvents.filter((e) => e.type === 'source_up').length;
    if (this.expectation.down) {
      expect([downs, ups], 'source_down and source_up once each').toEqual([1, 1]);
      const bound = (this.expectation.hangs ? readDeadlineMs(POLL_MS) : 0) + 2 * POLL_MS;
      expect(resumedMs!, `history resumed within ${this.expectation.hangs ? 'a read deadline and ' : ''}two polls of recovery`).toBeLessThanOrEqual(bound);
    } else {
      expect(downs, `a fault the source can be read through makes it neither down nor up (${sourceEvents.map((e) => `${e.seq}:${e.type}@${e.at.toISOString()}`).join(' ')})`).toBe(ups);
      expect(downs).toBeLessThanOrEqual(1);
    }

    // 3. No event written twice: every lease's history numbered 1..n by the collector (an admin
    //    action's event is numbered minus its audit id: docs/admin-actions.md), no two alike.
    const duplicates = await store.withSql((sql) =>
      sql.query<{ n: string }>(
        `SELECT count(*) AS n FROM (SELECT 1 FROM "LeaseEvent" GROUP BY "leaseId", type, at, holder, token HAVING count(*) > 1
           UNION ALL SELECT 1 FROM "LeaseEvent" GROUP BY "leaseId", seq HAVING count(*) > 1
           UNION ALL SELECT 1 FROM "SourceEvent" GROUP BY "sourceName", seq HAVING count(*) > 1) d`,
      ),
    );
    const gaps = await store.withSql((sql) =>
      sql.query<{ leaseId: string; seqs: string }>(`SELECT "leaseId", string_agg(seq || ':' || type, ',' ORDER BY seq) AS seqs FROM "LeaseEvent" WHERE seq > 0 GROUP BY "leaseId" HAVING max(seq) <> count(*)`),
    );
    const writtenTwice = Number(duplicates[0]!.n);
    expect(writtenTwice, 'no event written twice').toBe(0);
    expect(gaps, 'no event lost from a numbered history').toEqual([]);

    // 4. Every alert's every message delivered, under one webhook-id, signed; a receiver that
    //    keeps the ids it has seen sees each exactly once.
    const deliveries = await store.prisma.webhookDelivery.findMany({ where: { webhookId } });
    const received = receiver.received.filter((r) => r.verified);
    expect(receiver.received.filter((r) => !r.verified).map((r) => r.error), 'every request is signed with the endpoint secret').toEqual([]);
    const ids = new Set(received.map((r) => r.id));
    for (const d of deliveries) expect(ids.has(d.messageId), `delivery ${d.messageId} (${d.event}) reached the receiver`).toBe(true);
    expect(ids.size, 'no message the store does not know of').toBe(deliveries.length);
    const perTransition = new Map<string, number>();
    for (const d of deliveries) if (d.alertId !== null) perTransition.set(`${d.alertId}:${d.event}`, (perTransition.get(`${d.alertId}:${d.event}`) ?? 0) + 1);
    expect([...perTransition].filter(([, n]) => n > 1), 'one message per alert and transition').toEqual([]);
    const mineDeliveries = deliveries.filter((d) => d.createdAt.getTime() >= this.beganAt);

    // 5. Every force action audited exactly once with its true outcome, and applied at most once.
    const mine = this.attempts.slice(this.attemptsBefore);
    const audit = await store.prisma.auditEntry.findMany({ where: { leaseId: { in: [...new Set(mine.map((a) => a.leaseId))] }, at: { gte: new Date(this.beganAt - 1_000) } } });
    const byRequest = new Map<string, string[]>();
    for (const entry of audit) byRequest.set(entry.requestId, [...(byRequest.get(entry.requestId) ?? []), entry.phase]);
    const results = [...byRequest.values()].map((phases) => phases.filter((p) => p !== 'requested'));
    const auditedOnce = [...byRequest.values()].every((phases) => phases.filter((p) => p === 'requested').length === 1) && results.every((r) => r.length === 1);
    expect(auditedOnce, 'each action: one requested entry and one result').toBe(true);
    expect(byRequest.size, 'one audited request per attempt').toBe(mine.length);
    const count = (outcome: ActionOutcome) => mine.filter((a) => a.outcome === outcome).length;
    const auditCount = (phase: string) => results.filter((r) => r[0] === phase).length;
    expect([auditCount('done'), auditCount('refused'), auditCount('error')], 'the audit says how each ended').toEqual([count('done'), count('refused'), count('unknown')]);
    for (const entry of audit.filter((e) => e.phase === 'error')) expect((entry.detail as { outcome?: string }).outcome).toBe('unknown');
    for (const a of mine.filter((m) => m.outcome === 'done')) {
      // Applied once: the token moved by one, and the lease's history has one forced expiry for it.
      expect(BigInt(a.newToken!) - BigInt(a.previousToken!), `${a.leaseId}: the token moved by one`).toBe(1n);
    }
    const forcedLeases = [...new Set(mine.map((a) => a.leaseId))];
    for (const leaseId of forcedLeases) {
      const forcedEvents = await store.prisma.leaseEvent.count({ where: { leaseId, type: 'force_expired' } });
      const done = this.attempts.filter((a) => a.leaseId === leaseId && a.outcome === 'done').length;
      expect(forcedEvents, `${leaseId}: one force_expired event per action done`).toBe(done);
    }

    const row: FaultRow = {
      fault: this.name,
      seconds: Math.round((endedAt - this.beganAt) / 1_000),
      steadyLeases: steady.length,
      eventsChecked: events.length + sourceEvents.length,
      invented: invented.length + inventedAlerts.length,
      staleSeen: this.expectation.down ? `${this.stale.rightLastRead}/${this.stale.of}` : '-',
      sourceDown: downs,
      sourceUp: ups,
      resumedMs,
      writtenTwice,
      alerts: new Set(mineDeliveries.map((d) => String(d.alertId))).size,
      webhookIds: mineDeliveries.length,
      receipts: received.filter((r) => mineDeliveries.some((d) => d.messageId === r.id)).length,
      actions: `${count('done')} done, ${count('refused')} refused, ${count('unknown')} unknown`,
      auditedOnce,
    };
    record(row);
    return row;
  }
}

/** Each fault's row, appended to .leasehold/chaos/results.jsonl (docs/reliability.md's table is made from it). */
function record(row: FaultRow) {
  const dir = path.join(ROOT, '.leasehold', 'chaos');
  mkdirSync(dir, { recursive: true });
  appendFileSync(path.join(dir, 'results.jsonl'), `${JSON.stringify({ ...row, at: new Date().toISOString() })}\n`);
  console.log(`chaos: ${JSON.stringify(row)}`);
}
