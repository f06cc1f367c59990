// The alert engine of one collector process: the pure evaluator (lib/domain/alert-rules/)
// fed with what each source's observer applies, ticked once a second for the time-based rules,
// its decisions written to the store with their deliveries in one transaction each batch
// (lib/db/alerts.ts), and this process's delivery worker woken at once.
//
// It never holds up the observer: feeding is synchronous and cheap; writes go in the
// background, one batch at a time, in order, retried while the store fails.
import type { Store } from '../db';
import { applyAlertWrites, openAlertsOf, type AlertWrite } from '../db/alerts';
import { loadRules, rulesVersion } from '../db/alert-rules';
import { AlertEvaluator, type AlertDecision, type AlertInput, type AlertRule, type LeaseFacts } from '../domain/alert-rules';
import type { AlertView } from '../domain/alert-types';
import type { AppliedRead } from '../domain/apply-read';
import type { LeaseChange, TrackedLease } from '../domain/tracked-lease';
import type { Logger } from '../log';
import { metrics } from '../metrics';
import { systemClock, type Clock } from '../time/clock';
import { alertFingerprint } from './fingerprint';
import { ClaimsFeed } from './claims-feed';

const TICK_MS = 1_000;
const CLAIMS_EVERY_MS = 500;
/** The rules that judge holders' reports: the engine reads them only while one is on. */
const CLAIM_RULES: ReadonlySet<string> = new Set(['split_brain', 'late_holder']);
const RULES_CHECK_MS = 5_000;
/** Writes waiting while the store fails; beyond this the oldest are dropped, counted and logged. */
const MAX_PENDING_WRITES = 50_000;

export type AlertEngineOptions = {
  store: Store;
  linkOf: (view: AlertView) => string | null;
  /** Its area's pino logger (the collector hands a child of its root's, `area: alerts`). */
  log: Logger;
  clock?: Clock;
};

export function leaseFacts(lease: TrackedLease): LeaseFacts {
  const viewSince = lease.state === 'held' ? lease.acquiredAtWall : (lease.ended?.atWall ?? null);
  return {
    id: lease.id,
    source: lease.source,
    key: lease.key,
    kind: lease.kind,
    state: lease.state,
    stale: lease.stale,
    holder: lease.holder,
    lastHolder: lease.lastHolder,
    token: lease.token?.toString() ?? null,
    lastToken: lease.lastToken?.toString() ?? null,
    ttlMs: lease.ttlMs,
    candidates: lease.candidates.length,
    viewSinceMono: viewSince === null ? null : lease.observedAtMono - (lease.observedAtWall - viewSince),
  };
}

const changeFacts = (change: LeaseChange) => ({
  type: change.type,
  holder: change.holder,
  previousHolder: change.previousHolder,
  token: change.token?.toString() ?? null,
  previousToken: change.previousToken?.toString() ?? null,
  gapMs: change.gapMs,
  detail: change.detail,
});

/** A decision as the store takes it. */
export function alertWrite(decision: AlertDecision): AlertWrite {
  const fingerprint = alertFingerprint(decision.rule.id, decision.subject);
  if (decision.op === 'clear') return { op: 'clear', fingerprint };
  return {
    op: 'raise',
    fingerprint,
    rule: { id: decision.rule.id, name: decision.rule.name, type: decision.rule.type },
    severity: decision.severity,
    source: decision.subject.source,
    leaseId: decision.subject.leaseId,
    leaseKey: decision.subject.leaseKey,
    summary: decision.summary,
    facts: decision.facts,
    resolveAfterMs: decision.resolveAfterMs,
  };
}

export class AlertEngine {
  private readonly evaluator = new AlertEvaluator([]);
  private rules: AlertRule[] = [];
  private version: string | null = null;
  private pending: AlertWrite[] = [];
  private writing: Promise<void> | null = null;
  private readonly clock: Clock;
  private loaded: Promise<void> | null = null;
  private readonly claims: ClaimsFeed;
  private claimsRead: Promise<void> | null = null;

  constructor(private readonly options: AlertEngineOptions) {
    this.clock = options.clock ?? systemClock;
    this.claims = new ClaimsFeed(options.store, leaseFacts);
  }

  /** Ticks and rule reloads until `signal` aborts; then waits for the writes in flight. */
  async run(signal: AbortSignal): Promise<void> {
    let lastRulesCheck = -Infinity;
    let lastTick = -Infinity;
    while (!signal.aborted) {
      const now = this.clock.mono();
      if (now - lastRulesCheck >= RULES_CHECK_MS) {
        lastRulesCheck = now;
        await this.reloadRules().catch(() => {});
      }
      // Holders' claims are read twice a tick, and judged at once when any came: a zombie's
      // first report after it wakes is raised within half a second of reaching the store.
      // In the background: a store that hangs holds up no other rule's tick.
      this.claimsRead ??= this.readClaims(signal)
        .then((fed) => {
          if (fed) this.decide(this.evaluator.tick(this.clock.mono()));
        })
        .finally(() => (this.claimsRead = null));
      const tickAt = this.clock.mono();
      if (tickAt - lastTick >= TICK_MS) {
        lastTick = tickAt;
        this.decide(this.evaluator.tick(tickAt));
      }
      await this.clock.sleep(CLAIMS_EVERY_MS, signal);
    }
    await this.idle();
  }

  /** Resolves when the rules are loaded (at most a few seconds: alerts are not worth holding the observer longer). */
  ready(): Promise<void> {
    this.loaded ??= this.reloadRules().catch((error: unknown) => {
      this.loaded = null;
      this.options.log.warn(`the rules could not be loaded (${(error as Error)?.message ?? error}); trying again`);
    });
    return this.loaded;
  }

  private async reloadRules() {
    const version = await rulesVersion(this.options.store);
    if (version === this.version) return;
    const { rules, problems } = await loadRules(this.options.store);
    for (const problem of problems) this.options.log.warn(`${problem}; the rule is not evaluated`);
    this.rules = rules;
    this.evaluator.setRules(rules);
    this.version = version;
  }

  /** A source is observed by this process now: its open alerts are this engine's to clear. */
  async adopt(source: string): Promise<void> {
    await this.ready();
    const open = await openAlertsOf(this.options.store, source).catch(() => []);
    for (const alert of open) {
      const rule = this.rules.find((r) => r.id === alert.rule.id);
      if (rule) this.evaluator.adoptOpen(rule, { source: alert.source, leaseId: alert.leaseId, leaseKey: alert.leaseKey });
    }
  }

  /** A source is no longer observed here. */
  release(source: string): void {
    this.claims.forget(source);
    this.evaluator.forgetSource(source);
  }

  /** The observer's leases of a source (by key), for holders' claims on them to be judged. */
  watch(source: string, leases: ReadonlyMap<string, TrackedLease>): void {
    this.claims.watch(source, leases);
  }

  /** Holders' claims reported since the last read, when a rule judges them; true when any came. A store that fails is tried again at the next read. */
  private async readClaims(signal: AbortSignal): Promise<boolean> {
    if (!this.rules.some((rule) => rule.enabled && CLAIM_RULES.has(rule.type))) return false;
    try {
      const inputs = await this.claims.read(this.clock.mono(), this.clock.wall());
      // Stopped meanwhile: nothing more is decided (and written) after the engine has stopped.
      if (signal.aborted) return false;
      const now = this.clock.mono();
      this.decide(inputs.flatMap((input) => this.evaluator.apply(input, now)));
      return inputs.length > 0;
    } catch (error) {
      this.options.log.debug(`holders' claims could not be read (${(error as Error)?.message ?? error}); trying again shortly`);
      return false;
    }
  }

  /** What one read of a source changed: its events, renewals and new pictures. */
  observed(applied: AppliedRead): void {
    const now = this.clock.mono();
    const decisions: AlertDecision[] = [];
    const feed = (input: AlertInput) => decisions.push(...this.evaluator.apply(input, now));
    for (const { lease, change } of applied.events) feed({ type: 'change', lease: leaseFacts(lease), change: changeFacts(change) });
    for (const { lease, renewal } of applied.renewals) feed({ type: 'renewal', lease: leaseFacts(lease), marginMs: renewal.marginMs, intervalMs: renewal.intervalMs, ttlMs: renewal.ttlMs, uncertaintyMs: renewal.marginUncertaintyMs });
    for (const lease of applied.dirty) feed({ type: 'seen', lease: leaseFacts(lease) });
    this.decide(decisions);
  }

  /** Leases marked stale (their source or table unread): seen as such, so nothing is judged of them. */
  staled(leases: Iterable<TrackedLease>): void {
    const now = this.clock.mono();
    const decisions: AlertDecision[] = [];
    for (const lease of leases) decisions.push(...this.evaluator.apply({ type: 'seen', lease: leaseFacts(lease) }, now));
    this.decide(decisions);
  }

  sourceStatus(source: string, up: boolean, reason: string | null): void {
    this.decide(this.evaluator.apply({ type: 'source', source, up, reason }, this.clock.mono()));
  }

  /** One call of a source's canary lease (lib/collector/canary.ts): the slow_renewals rule reads it. */
  canary(call: Omit<Extract<AlertInput, { type: 'canary' }>, 'type'>): void {
    this.decide(this.evaluator.apply({ type: 'canary', ...call }, this.clock.mono()));
  }

  /** Resolves when every decision so far is written (or given up on). */
  async idle(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private decide(decisions: AlertDecision[]) {
    if (decisions.length === 0) return;
    for (const decision of decisions) {
      this.pending.push(alertWrite(decision));
      metrics.inc('leasehold_alerts_total', { rule: decision.rule.type, state: decision.op === 'raise' ? 'firing' : 'resolved' });
    }
    if (this.pending.length > MAX_PENDING_WRITES) {
      const dropped = this.pending.splice(0, this.pending.length - MAX_PENDING_WRITES);
      this.options.log.error({ dropped: dropped.length }, `the store has not taken alert changes for a while; ${dropped.length} of them were dropped`);
    }
    this.writing ??= this.write();
  }

  private async write(): Promise<void> {
    let delayMs = 100;
    try {
      while (this.pending.length > 0) {
        const batch = this.pending.slice(0, 500);
        try {
          const applied = await applyAlertWrites(this.options.store, batch, { linkOf: this.options.linkOf, nowWall: this.clock.wall() });
          this.pending.splice(0, batch.length);
          delayMs = 100;
          if (applied.queued > 0) this.options.store.outbox.changed();
          for (const alert of applied.fired) this.options.log.info({ rule: alert.rule.type, lease: alert.leaseId }, `alert firing: ${alert.rule.type}: ${alert.summary}`);
        } catch (error) {
          metrics.inc('leasehold_alert_write_failures_total', {});
          if (isDataError(error)) {
            // The store refuses what was asked (not that it cannot be reached): each write
            // alone, and the ones it refuses are logged and left, so one cannot block the rest.
            await this.writeOneByOne(batch);
            this.pending.splice(0, batch.length);
            continue;
          }
          this.options.log.warn(`writing ${batch.length} alert change${batch.length === 1 ? '' : 's'} failed (${(error as Error)?.message ?? error}); retrying in ${delayMs} ms`);
          await this.clock.sleep(delayMs);
          delayMs = Math.min(delayMs * 2, 10_000);
        }
      }
    } finally {
      this.writing = null;
    }
  }

  private async writeOneByOne(batch: AlertWrite[]) {
    for (const write of batch) {
      try {
        const applied = await applyAlertWrites(this.options.store, [write], { linkOf: this.options.linkOf, nowWall: this.clock.wall() });
        if (applied.queued > 0) this.options.store.outbox.changed();
      } catch (error) {
        this.options.log.error(`the store refused an alert change (${write.op} ${write.fingerprint}): ${(error as Error)?.message ?? error}`);
      }
    }
  }
}

/** A PostgreSQL error about the data (SQLSTATE class 22 or 23), which retrying will not cure. */
function isDataError(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return typeof code === 'string' && /^2[23]/.test(code);
}
