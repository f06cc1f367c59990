// Alert rules, evaluated (DESIGN.md section 6b). Pure: fed, in order, by the transitions the
// collector already produces (a lease's changes, its renewals, its picture after a read, a
// source going down or up) and by ticks of the observer's monotonic clock; it answers with
// decisions: raise an alert for a rule and subject, or clear it. It keeps only what the
// time-based rules need; the store is the truth of which alerts are open (it raises at most one
// per rule and subject, and resolves event alerts after their hold time by itself).
import { paramOf, subjectId, type AlertDecision, type AlertFacts, type AlertInput, type AlertRule, type AlertSubject, type ChangeFacts, type LeaseFacts } from './alert-rule-model';
import { scopeCovers } from './alert-scope';
import type { AlertRuleType } from './alert-types';
import { ms, said, show } from './alert-text';
import { isChangeOfHands } from './health';

export * from './alert-rule-model';

/** The facts of an alert that has none (a source, a test message): every one empty. */
export const NO_FACTS: AlertFacts = { holder: null, previousHolder: null, token: null, previousToken: null, ttlMs: null, marginMs: null, gapMs: null, detail: null };
const openKey = (rule: AlertRule, subject: AlertSubject) => `${rule.id}\n${subjectId(subject)}`;
const leaseSubject = (lease: LeaseFacts): AlertSubject => ({ source: lease.source, leaseId: lease.id, leaseKey: lease.key });
type Since = { mono: number; lease: LeaseFacts };

export class AlertEvaluator {
  private byType = new Map<AlertRuleType, AlertRule[]>();
  /** Alerts this evaluator raised and has not cleared (the store may have resolved event alerts since). */
  private readonly open = new Set<string>();
  private readonly downSince = new Map<string, { mono: number; reason: string | null }>();
  private readonly notHeldSince = new Map<string, Since>();
  private readonly heldSince = new Map<string, Since & { holder: string; token: string | null }>();
  private readonly handChanges = new Map<string, { times: number[]; lease: LeaseFacts }>();

  constructor(rules: readonly AlertRule[]) {
    this.setRules(rules);
  }

  setRules(rules: readonly AlertRule[]): void {
    this.byType = new Map();
    for (const rule of rules) {
      if (!rule.enabled) continue;
      const list = this.byType.get(rule.type) ?? [];
      list.push(rule);
      this.byType.set(rule.type, list);
    }
  }

  /** Alerts known open in the store (at start, or when a source is taken over): clears are sent for them. */
  adoptOpen(rule: AlertRule, subject: AlertSubject): void {
    this.open.add(openKey(rule, subject));
  }

  /** Forgets a source's leases (it is observed elsewhere now). */
  forgetSource(source: string): void {
    this.downSince.delete(source);
    for (const map of [this.notHeldSince, this.heldSince, this.handChanges] as Map<string, { lease: LeaseFacts }>[]) {
      for (const [id, entry] of map) if (entry.lease.source === source) map.delete(id);
    }
  }

  apply(input: AlertInput, nowMono: number): AlertDecision[] {
    const out: AlertDecision[] = [];
    switch (input.type) {
      case 'change':
        this.onChange(input.lease, input.change, nowMono, out);
        break;
      case 'renewal':
        this.onRenewal(input, out);
        break;
      case 'seen':
        this.onSeen(input.lease, nowMono, out);
        break;
      case 'source':
        this.onSource(input.source, input.up, input.reason, nowMono, out);
        break;
      case 'forced':
        this.onForced(input, out);
        break;
    }
    return out;
  }

  /** The time-based rules: a source down, an election leaderless, a holder holding, for long enough; flapping that calmed down. */
  tick(nowMono: number): AlertDecision[] {
    const out: AlertDecision[] = [];
    for (const rule of this.rules('source_down')) {
      for (const [source, down] of this.downSince) {
        const subject: AlertSubject = { source, leaseId: null, leaseKey: null };
        if (nowMono - down.mono < paramOf(rule, 'afterMs') || !scopeCovers(rule.scope, source, null)) continue;
        this.raise(out, rule, subject, `source ${source} has been unreadable for ${ms(nowMono - down.mono)}${down.reason ? `: ${said(down.reason, 200)}` : ''}`, {
          ...NO_FACTS,
          detail: { downForMs: Math.round(nowMono - down.mono), reason: down.reason },
        }, null, true);
      }
    }
    for (const rule of this.rules('leaderless')) {
      for (const { mono, lease } of this.notHeldSince.values()) {
        if (lease.stale || nowMono - mono < paramOf(rule, 'afterMs') || !leaderlessFor(rule, lease) || !covers(rule, lease)) continue;
        const what = lease.kind === 'election' ? `election with ${lease.candidates} candidate${lease.candidates === 1 ? '' : 's'}` : 'lock';
        this.raise(out, rule, leaseSubject(lease), `${show(lease.id)}: ${what} without a holder for ${ms(nowMono - mono)}`, {
          ...NO_FACTS,
          previousHolder: lease.lastHolder,
          previousToken: lease.lastToken,
          ttlMs: lease.ttlMs,
          detail: { withoutHolderForMs: Math.round(nowMono - mono), candidates: lease.candidates },
        }, null, true);
      }
    }
    for (const rule of this.rules('held_too_long')) {
      for (const held of this.heldSince.values()) {
        if (held.lease.stale || nowMono - held.mono < paramOf(rule, 'afterMs') || !covers(rule, held.lease)) continue;
        this.raise(out, rule, leaseSubject(held.lease), `${show(held.lease.id)}: held by ${show(held.holder)} for ${ms(nowMono - held.mono)}`, {
          ...NO_FACTS,
          holder: held.holder,
          token: held.token,
          ttlMs: held.lease.ttlMs,
          detail: { heldForMs: Math.round(nowMono - held.mono) },
        }, null, true);
      }
    }
    const flapping = this.rules('flapping');
    const longest = Math.max(0, ...flapping.map((rule) => paramOf(rule, 'windowMs')));
    for (const [id, flaps] of this.handChanges) {
      for (const rule of flapping) {
        const recent = flaps.times.filter((t) => nowMono - t <= paramOf(rule, 'windowMs')).length;
        if (recent <= paramOf(rule, 'changes')) this.clear(out, rule, leaseSubject(flaps.lease), 'calmer now');
      }
      flaps.times = flaps.times.filter((t) => nowMono - t <= longest);
      if (flaps.times.length === 0) this.handChanges.delete(id);
    }
    return out;
  }

  private rules(type: AlertRuleType): AlertRule[] {
    return this.byType.get(type) ?? [];
  }

  private raise(out: AlertDecision[], rule: AlertRule, subject: AlertSubject, summary: string, facts: AlertFacts, resolveAfterMs: number | null, onlyOnce = false) {
    const key = openKey(rule, subject);
    // A condition that lasts (a source down) is raised once; an event raised again counts as a repeat.
    if (onlyOnce && this.open.has(key)) return;
    this.open.add(key);
    const severity = rule.type === 'token_regression' ? 'critical' : rule.severity;
    out.push({ op: 'raise', rule, subject, severity, summary, facts, resolveAfterMs });
  }

  private clear(out: AlertDecision[], rule: AlertRule, subject: AlertSubject, why: string) {
    if (this.open.delete(openKey(rule, subject))) out.push({ op: 'clear', rule, subject, why });
  }

  private clearAll(out: AlertDecision[], type: AlertRuleType, lease: LeaseFacts, why: string) {
    for (const rule of this.rules(type)) this.clear(out, rule, leaseSubject(lease), why);
  }

  private onChange(lease: LeaseFacts, change: ChangeFacts, nowMono: number, out: AlertDecision[]) {
    const subject = leaseSubject(lease);
    if (change.type === 'expired') {
      for (const rule of this.rules('missed_renewal')) {
        if (!covers(rule, lease)) continue;
        this.raise(out, rule, subject, `${show(lease.id)}: ${show(change.previousHolder)} missed its renewal; the lease expired${change.previousToken ? ` (token ${change.previousToken})` : ''}`, {
          ...NO_FACTS,
          previousHolder: change.previousHolder,
          previousToken: change.previousToken,
          ttlMs: lease.ttlMs,
        }, paramOf(rule, 'resolveAfterMs'));
      }
      return;
    }
    if (change.type === 'token_regression') {
      for (const rule of this.rules('token_regression')) {
        if (!covers(rule, lease)) continue;
        this.raise(out, rule, subject, `${show(lease.id)}: token went back from ${change.previousToken ?? '?'} to ${change.token ?? '?'} (holder ${show(change.holder)})`, {
          ...NO_FACTS,
          ...handsOf(change),
          ttlMs: lease.ttlMs,
        }, paramOf(rule, 'resolveAfterMs'));
      }
      return;
    }
    if (change.type === 'acquired' || change.type === 'taken_over' || change.type === 'released' || change.type === 'observation_gap') {
      // The lease moved on: a missed renewal is over, and so is a late one.
      this.clearAll(out, 'missed_renewal', lease, change.type === 'released' ? 'released' : 'held again');
      this.clearAll(out, 'late_renewal', lease, 'another grant');
    }
    if (!isChangeOfHands(change)) return;
    for (const rule of this.rules('failover')) {
      if (!covers(rule, lease)) continue;
      this.raise(out, rule, subject, `${show(lease.id)}: ${show(change.previousHolder)} → ${show(change.holder)}${change.gapMs !== null ? `, ${ms(change.gapMs)} without a holder` : ''}${change.token ? ` (token ${change.previousToken ?? '?'} → ${change.token})` : ''}`, {
        ...NO_FACTS,
        ...handsOf(change),
        ttlMs: lease.ttlMs,
        gapMs: change.gapMs,
        detail: change.type === 'taken_over' ? { takenOver: true } : null,
      }, paramOf(rule, 'resolveAfterMs'));
    }
    const flapping = this.rules('flapping');
    if (flapping.length === 0) return;
    const flaps = this.handChanges.get(lease.id) ?? { times: [], lease };
    flaps.lease = lease;
    const longest = Math.max(...flapping.map((rule) => paramOf(rule, 'windowMs')));
    flaps.times = [...flaps.times.filter((t) => nowMono - t <= longest), nowMono];
    this.handChanges.set(lease.id, flaps);
    for (const rule of flapping) {
      if (!covers(rule, lease)) continue;
      const count = flaps.times.filter((t) => nowMono - t <= paramOf(rule, 'windowMs')).length;
      if (count <= paramOf(rule, 'changes')) continue;
      this.raise(out, rule, subject, `${show(lease.id)}: ${count} changes of holder within ${ms(paramOf(rule, 'windowMs'))}`, {
        ...NO_FACTS,
        holder: change.holder,
        token: change.token,
        ttlMs: lease.ttlMs,
        detail: { changes: count, windowMs: paramOf(rule, 'windowMs') },
      }, null);
    }
  }

  private onRenewal(input: Extract<AlertInput, { type: 'renewal' }>, out: AlertDecision[]) {
    const { lease, marginMs, intervalMs, ttlMs } = input;
    // Late only when it surely was: the margin plus what the reading may be off by is still short.
    const surelyLeft = marginMs + (input.uncertaintyMs ?? 0);
    // The new holder renews: the failover is behind us.
    this.clearAll(out, 'failover', lease, 'the new holder renewed');
    for (const rule of this.rules('late_renewal')) {
      if (!covers(rule, lease) || ttlMs === null || ttlMs <= 0) continue;
      const percent = (100 * surelyLeft) / ttlMs;
      if (percent >= paramOf(rule, 'marginPercent')) {
        this.clear(out, rule, leaseSubject(lease), 'renewed in time');
        continue;
      }
      this.raise(out, rule, leaseSubject(lease), `${show(lease.id)}: ${show(lease.holder)} renewed with ${ms(marginMs)} left of ${ms(ttlMs)} (${((100 * marginMs) / ttlMs).toFixed(0)} %)`, {
        ...NO_FACTS,
        holder: lease.holder,
        token: lease.token,
        ttlMs,
        marginMs,
        detail: { intervalMs, marginPercent: Math.round((1000 * marginMs) / ttlMs) / 10, uncertaintyMs: input.uncertaintyMs ?? 0 },
      }, null);
    }
  }

  private onSeen(lease: LeaseFacts, nowMono: number, out: AlertDecision[]) {
    const notHeld = this.notHeldSince.get(lease.id);
    const held = this.heldSince.get(lease.id);
    if (lease.stale) {
      // Its source (or table) cannot be read: nothing is judged, and the time it was not
      // watched does not count (it starts again when it is seen).
      if (notHeld) notHeld.lease = lease;
      if (held) held.lease = lease;
      return;
    }
    if (notHeld?.lease.stale) notHeld.mono = nowMono;
    if (held?.lease.stale) held.mono = nowMono;
    if (lease.state === 'held') {
      this.notHeldSince.delete(lease.id);
      this.clearAll(out, 'leaderless', lease, 'held again');
      if (this.rules('held_too_long').length > 0) {
        if (!held || held.holder !== lease.holder || held.token !== lease.token) {
          if (held) this.clearAll(out, 'held_too_long', lease, 'another holder');
          this.heldSince.set(lease.id, { mono: nowMono, lease, holder: lease.holder!, token: lease.token });
        } else held.lease = lease;
      }
      return;
    }
    if (this.heldSince.delete(lease.id)) this.clearAll(out, 'held_too_long', lease, 'not held now');
    if (this.rules('leaderless').length === 0) return;
    if (notHeld) notHeld.lease = lease;
    else if (lease.lastHolder !== null || lease.candidates > 0) this.notHeldSince.set(lease.id, { mono: nowMono, lease });
  }

  private onSource(source: string, up: boolean, reason: string | null, nowMono: number, out: AlertDecision[]) {
    if (!up) {
      if (!this.downSince.has(source)) this.downSince.set(source, { mono: nowMono, reason });
      return;
    }
    this.downSince.delete(source);
    for (const rule of this.rules('source_down')) this.clear(out, rule, { source, leaseId: null, leaseKey: null }, 'readable again');
  }

  private onForced(input: Extract<AlertInput, { type: 'forced' }>, out: AlertDecision[]) {
    const { lease } = input;
    const verb = input.action === 'force_expired' ? 'force-expired' : 'force-released';
    for (const rule of this.rules('force_action')) {
      if (!covers(rule, lease)) continue;
      this.raise(out, rule, leaseSubject(lease), `${show(lease.id)}: ${verb} by ${said(input.actor, 80)}${input.newToken ? ` (token ${input.previousToken ?? '?'} → ${input.newToken})` : ''}: ${said(input.reason, 200)}`, {
        ...NO_FACTS,
        previousHolder: lease.holder,
        previousToken: input.previousToken,
        token: input.newToken,
        ttlMs: lease.ttlMs,
        detail: { action: input.action, actor: input.actor, reason: input.reason, auditId: input.auditId },
      }, paramOf(rule, 'resolveAfterMs'));
    }
  }
}

const covers = (rule: AlertRule, lease: LeaseFacts) => scopeCovers(rule.scope, lease.source, lease.id);
const handsOf = (change: ChangeFacts) => ({ holder: change.holder, previousHolder: change.previousHolder, token: change.token, previousToken: change.previousToken });

function leaderlessFor(rule: AlertRule, lease: LeaseFacts): boolean {
  if (lease.kind === 'election') return lease.candidates > 0 || lease.lastHolder !== null;
  return paramOf(rule, 'includeLocks') && lease.kind === 'lock' && lease.lastHolder !== null;
}
