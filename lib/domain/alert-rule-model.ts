// The shapes rule evaluation works on (lib/domain/alert-rules.ts): rules and their parameters
// with each type's defaults, what the evaluator is fed, and what it decides. Pure.
import type { AlertRuleType, AlertScope, AlertSeverity } from './alert-types';
import type { EventType, LeaseKind, LeaseState } from './types';

export type AlertRuleParams = {
  /** late_renewal: a renewal with less than this percentage of the TTL left (default 20). */
  marginPercent?: number;
  /** flapping: more than this many changes of holder (default 3)... */
  changes?: number;
  /** ...within this window (default 10 minutes). */
  windowMs?: number;
  /** leaderless, source_down, held_too_long: for longer than this. */
  afterMs?: number;
  /** leaderless: also locks that were held and are not now (default: elections only). */
  includeLocks?: boolean;
  /** missed_renewal, failover, token_regression, force_action: resolved by itself after this long without a repeat. */
  resolveAfterMs?: number;
};

export type AlertRule = {
  id: string;
  name: string;
  type: AlertRuleType;
  severity: AlertSeverity;
  scope: AlertScope;
  params: AlertRuleParams;
  enabled: boolean;
};

/** Each rule type's defaults, and whether its alerts resolve by themselves (event rules). */
export const RULE_DEFAULTS: Record<AlertRuleType, { params: AlertRuleParams; severity: AlertSeverity; describe: string }> = {
  // An event: resolved when the lease is held again or released, or by itself after
  // resolveAfterMs. A lease the backend deleted when it ran out (an etcd or Redis key) and that
  // nobody takes again no longer exists: its alert must not fire (and be re-sent) for ever.
  // What lasts, an election or lock left without a holder, is `leaderless`'s to say.
  missed_renewal: { params: { resolveAfterMs: 900_000 }, severity: 'critical', describe: 'a held lease reached its deadline without renewal or release' },
  late_renewal: { params: { marginPercent: 20 }, severity: 'warning', describe: 'a renewal with less than marginPercent % of the TTL left' },
  failover: { params: { resolveAfterMs: 300_000 }, severity: 'warning', describe: 'a change of holder, with the gap' },
  flapping: { params: { changes: 3, windowMs: 600_000 }, severity: 'warning', describe: 'more than `changes` changes of holder within `windowMs`' },
  leaderless: { params: { afterMs: 30_000, includeLocks: false }, severity: 'critical', describe: 'an election with candidates and no leader (or, with includeLocks, a lock with no holder) for longer than afterMs' },
  token_regression: { params: { resolveAfterMs: 900_000 }, severity: 'critical', describe: 'a token went down or repeated for a new holder (always critical)' },
  source_down: { params: { afterMs: 30_000 }, severity: 'critical', describe: 'a source unreadable for longer than afterMs' },
  held_too_long: { params: { afterMs: 3_600_000 }, severity: 'warning', describe: 'one holder for longer than afterMs (a stuck job)' },
  force_action: { params: { resolveAfterMs: 300_000 }, severity: 'info', describe: 'someone force-expired or force-released a lease' },
};

/** What the evaluator needs of a lease (from the collector's tracked lease). */
export type LeaseFacts = {
  id: string;
  source: string;
  key: string;
  kind: LeaseKind;
  state: LeaseState;
  stale: boolean;
  holder: string | null;
  lastHolder: string | null;
  /** Decimal strings. */
  token: string | null;
  lastToken: string | null;
  ttlMs: number | null;
  candidates: number;
};

export type ChangeFacts = {
  type: EventType;
  holder: string | null;
  previousHolder: string | null;
  token: string | null;
  previousToken: string | null;
  gapMs: number | null;
  detail: Record<string, unknown> | null;
};

export type AlertInput =
  /** One of a lease's changes (events), in order. */
  | { type: 'change'; lease: LeaseFacts; change: ChangeFacts }
  /** A renewal: how much of the TTL was left. */
  /** A renewal: how much of the TTL was left, and how far off that figure may be (the backend's precision: etcd reports whole seconds). */
  | { type: 'renewal'; lease: LeaseFacts; marginMs: number; intervalMs: number; ttlMs: number | null; uncertaintyMs?: number }
  /** The lease's picture after a read changed it. */
  | { type: 'seen'; lease: LeaseFacts }
  | { type: 'source'; source: string; up: boolean; reason: string | null }
  /** An admin action forced the lease (lib/admin). */
  | { type: 'forced'; lease: LeaseFacts; action: 'force_expired' | 'force_released'; actor: string; reason: string; previousToken: string | null; newToken: string | null; auditId: string | null };

export type AlertSubject = { source: string; leaseId: string | null; leaseKey: string | null };

export type AlertFacts = {
  holder: string | null;
  previousHolder: string | null;
  token: string | null;
  previousToken: string | null;
  ttlMs: number | null;
  marginMs: number | null;
  gapMs: number | null;
  detail: Record<string, unknown> | null;
};

export type AlertDecision =
  | { op: 'raise'; rule: AlertRule; subject: AlertSubject; severity: AlertSeverity; summary: string; facts: AlertFacts; resolveAfterMs: number | null }
  | { op: 'clear'; rule: AlertRule; subject: AlertSubject; why: string };


/** The value of a rule's parameter, or its type's default. */
export function paramOf<K extends keyof AlertRuleParams>(rule: AlertRule, name: K): NonNullable<AlertRuleParams[K]> {
  return (rule.params[name] ?? RULE_DEFAULTS[rule.type].params[name]) as NonNullable<AlertRuleParams[K]>;
}

/** A subject's identity within a rule: the lease id, or the source for source-wide alerts. */
export const subjectId = (subject: AlertSubject) => subject.leaseId ?? `source:${subject.source}`;
