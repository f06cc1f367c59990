// A delivery worker: claims due deliveries from the outbox (lib/db/deliveries.ts), builds each
// in its endpoint's format, signs it (Standard Webhooks), sends it through the egress agent,
// and records the outcome: delivered; failed and retried with backoff and full jitter (the
// receiver's Retry-After a floor), dead-lettered after the last attempt; 410 disables the
// endpoint. Every process with alerts on runs one; the outbox's claims keep them apart. It
// wakes at once when this process queues something, and looks every second otherwise.
import type { Dispatcher } from 'undici';
import type { AlertsConfig } from '../config/alerts-schema';
import type { Store } from '../db';
import { sweepAlerts } from '../db/alerts';
import { claimDeliveries, completeDelivery, type AttemptOutcome, type ClaimedDelivery } from '../db/deliveries';
import type { AlertView } from '../domain/alert-types';
import type { Logger } from '../log';
import { metrics } from '../metrics';
import { retryDelayMs } from './deliver/backoff';
import { createEgressAgent } from './deliver/egress';
import { buildRequest, isWebhookFormat } from './deliver/formats';
import { sendWebhook, type SendResult } from './deliver/send';
import { webhookHeaders } from './deliver/sign';
import { systemClock, type Clock } from '../time/clock';

/**
 * How often an idle worker looks at the outbox and sweeps: every second on PostgreSQL, where
 * other processes queue deliveries too; every 3 s on the embedded store, which is one process
 * (everything it queues wakes the worker at once) and one session shared with the pages.
 */
const lookEveryMs = (store: Store) => (store.kind === 'pglite' ? 3_000 : 1_000);
const BATCH = 16;
/** How long a claim holds: longer than an attempt can take, so a live worker's claim never runs out. */
const claimMsFor = (timeoutMs: number) => timeoutMs * 3 + 5_000;

export type DeliveryWorkerOptions = {
  store: Store;
  config: AlertsConfig;
  workerId: string;
  linkOf: (view: AlertView) => string | null;
  /** Its area's pino logger (the collector hands a child of its root's, `area: alerts`). */
  log: Logger;
  /** The way out (tests may pass one with their own resolver); default: an egress agent on config.allowCidrs. */
  dispatcher?: Dispatcher;
  /** First retry's ceiling (default 1 s). */
  retryBaseMs?: number;
  /** The ceiling retry delays never grow past (default 5 min). */
  retryMaxMs?: number;
  /** What sweeps, latencies, messages' times and signatures' timestamps are read on (default: the system clock). */
  clock?: Clock;
};

export class DeliveryWorker {
  private readonly dispatcher: Dispatcher;
  private readonly clock: Clock;
  private lastSweep = -Infinity;

  constructor(private readonly options: DeliveryWorkerOptions) {
    this.clock = options.clock ?? systemClock;
    this.dispatcher = options.dispatcher ?? createEgressAgent({ allowCidrs: options.config.allowCidrs, connectTimeoutMs: options.config.timeoutMs });
  }

  async run(signal: AbortSignal): Promise<void> {
    let failures = 0;
    while (!signal.aborted) {
      let busy = false;
      // Noted before looking: something queued while this pass runs is looked for again at once.
      const seen = this.options.store.outbox.changes();
      try {
        if (this.clock.mono() - this.lastSweep >= lookEveryMs(this.options.store)) {
          this.lastSweep = this.clock.mono();
          const swept = await sweepAlerts(this.options.store, { linkOf: this.options.linkOf, resendIntervalMs: this.options.config.resendIntervalMs, nowWall: this.clock.wall() });
          if (swept.queued > 0) busy = true;
        }
        busy = (await this.deliverDue()) === BATCH || busy;
        failures = 0;
      } catch (error) {
        // The store is down: nothing is lost (the rows wait), the worker looks again later.
        failures += 1;
        if (failures === 1 || failures % 60 === 0) this.options.log.warn(`the outbox cannot be read (${(error as Error)?.message ?? error}); trying again`);
      }
      const look = lookEveryMs(this.options.store);
      if (!busy) await this.options.store.outbox.next(failures > 0 ? Math.min(10_000, look * failures) : look, signal, failures > 0 ? undefined : seen);
    }
  }

  async close(): Promise<void> {
    if (!this.options.dispatcher) await this.dispatcher.close().catch(() => {});
  }

  /** Claims and sends one batch; returns how many were claimed. */
  async deliverDue(): Promise<number> {
    const claimed = await claimDeliveries(this.options.store, this.options.workerId, BATCH, claimMsFor(this.options.config.timeoutMs));
    await Promise.all(claimed.map((delivery) => this.deliver(delivery)));
    return claimed.length;
  }

  /** Sends one claimed delivery now and records it; what happened, for a person waiting on it (a test message). */
  async deliverOne(delivery: ClaimedDelivery): Promise<{ outcome: string; status: number | null; latencyMs: number | null; error: string | null }> {
    const result = await this.deliver(delivery);
    return { outcome: result.outcome, status: result.status, latencyMs: Math.round(result.latencyMs), error: result.error };
  }

  private async deliver(delivery: ClaimedDelivery): Promise<SendResult> {
    const { config } = this.options;
    const result = await this.attempt(delivery);
    metrics.inc('leasehold_webhook_attempts_total', { format: delivery.webhook.format, outcome: result.outcome });
    let outcome: AttemptOutcome;
    if (result.outcome === 'delivered') outcome = { kind: 'delivered', status: result.status!, latencyMs: result.latencyMs };
    else if (result.outcome === 'gone') outcome = { kind: 'gone', status: result.status!, latencyMs: result.latencyMs, error: `the endpoint answered ${result.status} Gone: it is disabled until someone enables it again` };
    else {
      // Refused before any connection (a private address not in alerts.allowCidrs, plain http):
      // trying again will not change that; dead-lettered now, with the reason, for replay once fixed.
      const last = result.outcome === 'refused' || delivery.attempts >= config.maxAttempts;
      outcome = {
        kind: 'failed',
        status: result.status,
        latencyMs: result.latencyMs,
        error: result.error ?? `answered ${result.status}`,
        retryInMs: retryDelayMs(delivery.attempts - 1, { baseMs: this.options.retryBaseMs ?? 1_000, maxMs: this.options.retryMaxMs, retryAfterMs: result.retryAfterMs }),
        last,
      };
      if (last) this.options.log.warn({ webhook: delivery.webhook.name, messageId: delivery.messageId }, `delivery ${delivery.messageId} to ${delivery.webhook.name} failed ${delivery.attempts} times (${outcome.error}); it is dead-lettered (replay it from /alerts)`);
    }
    const recorded = await completeDelivery(this.options.store, delivery.id, this.options.workerId, outcome).catch((error: unknown) => {
      this.options.log.error({ messageId: delivery.messageId }, `the outcome of ${delivery.messageId} could not be recorded (${(error as Error)?.message ?? error}); it will be sent again under the same webhook-id`);
      return false;
    });
    // A retry: look again when it is due, without waiting for the next look.
    if (recorded && outcome.kind === 'failed' && !outcome.last && outcome.retryInMs < 3_600_000) setTimeout(this.options.store.outbox.changed, outcome.retryInMs + 5).unref?.();
    return result;
  }

  /** One attempt: build, sign, send. A message that cannot be built is a failure with its reason, not a crash. */
  private async attempt(delivery: ClaimedDelivery): Promise<SendResult> {
    const { webhook } = delivery;
    const started = this.clock.mono();
    const failed = (error: string): SendResult => ({ outcome: 'failed', status: null, latencyMs: this.clock.mono() - started, retryAfterMs: null, error, responseExcerpt: null });
    if (!isWebhookFormat(webhook.format)) return failed(`unknown format "${webhook.format.slice(0, 40)}"`);
    if (webhook.unreadable) return failed(webhook.unreadable);
    let built;
    try {
      built = buildRequest(webhook.format, delivery.payload, {
        endpointUrl: webhook.url,
        endpointName: webhook.name,
        routingKey: webhook.routingKey,
        resendIntervalMs: this.options.config.resendIntervalMs,
        now: new Date(this.clock.wall()),
      });
    } catch (error) {
      return failed(`the message could not be built: ${(error as Error)?.message ?? error}`);
    }
    if (webhook.secrets.length === 0) return failed('the endpoint has no signing secret');
    let headers;
    try {
      headers = webhookHeaders({ id: delivery.messageId, timestampSeconds: Math.floor(this.clock.wall() / 1000), body: built.body, secrets: webhook.secrets });
    } catch (error) {
      return failed(`the message could not be signed: ${(error as Error)?.message ?? error}`);
    }
    return sendWebhook({
      url: built.url,
      body: built.body,
      headers: { ...headers, 'content-type': 'application/json', 'user-agent': 'Leasehold-Webhooks/1' },
      dispatcher: this.dispatcher,
      timeoutMs: this.options.config.timeoutMs,
      clock: this.clock,
    });
  }
}
