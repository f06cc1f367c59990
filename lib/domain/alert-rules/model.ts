// The shapes rule evaluation works on (lib/domain/alert-rules/): a rule as it is stored, what
// the evaluator is fed, and what it decides. Pure. Each rule type's parameters and defaults are
// its module's (define.ts, and one file per rule beside it).
import type { AlertRuleType, AlertScope, AlertSeverity, AlertView } from '../alert-types';
import type { ForceEventType } from '../admin-actions';
import type { EventType, LeaseKind, LeaseState } from '../types';

/**
 * A rule's parameters as stored: what its type's schema accepted (its module's `params`). A
 * parameter left out is its type's default when the rule is evaluated.
 */
export type AlertRuleParams = { readonly [name: string]: number | boolean | undefined };

/** A rule as it is stored. `T` is the type's name: one of the registered rules' (AlertRuleType) unless a test registers its own. */
export type AlertRule<T extends string = AlertRuleType> = {
  id: string;
  name: string;
  type: T;
  severity: AlertSeverity;
  scope: AlertScope;
  params: AlertRuleParams;
  enabled: boolean;
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
  /** When the backend's current view began (the grant held now, or the end of the last), on the observer's clock; null or left out: not known. */
  viewSinceMono?: number | null;
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
  /** A renewal: how much of the TTL was left, and how far off that figure may be (the backend's precision: etcd reports whole seconds). */
  | { type: 'renewal'; lease: LeaseFacts; marginMs: number; intervalMs: number; ttlMs: number | null; uncertaintyMs?: number }
  /** The lease's picture after a read changed it. */
  | { type: 'seen'; lease: LeaseFacts }
  | { type: 'source'; source: string; up: boolean; reason: string | null }
  /**
   * A holder's own report (POST /api/v1/telemetry): whether it believes it holds the lease,
   * with which token and until when (the observer's monotonic clock; null when it does not
   * claim; since when it has claimed without a break), the largest lateness of the renewals it reported with it, and the TTL it asked for.
   */
  | { type: 'claim'; lease: LeaseFacts; holder: string; token: string | null; claims: boolean; claimsSinceMono: number | null; claimUntilMono: number | null; lateMaxMs: number | null; ttlMs: number | null }
  /**
   * One call of a source's canary lease (lib/collector/canary.ts): its round trip, whether it
   * succeeded (outcome as lib/lease says it), the p99 of the canary's renewals over the last
   * minute (this one included; null before any) and the canary's TTL.
   */
  | { type: 'canary'; source: string; key: string; call: 'acquire' | 'renew' | 'release'; rttMs: number; ok: boolean; outcome: string; p99Ms: number | null; ttlMs: number }
  /** An admin action forced the lease (lib/admin). */
  | { type: 'forced'; lease: LeaseFacts; action: ForceEventType; actor: string; reason: string; previousToken: string | null; newToken: string | null; auditId: string | null };

export type AlertSubject = { source: string; leaseId: string | null; leaseKey: string | null };

/** What a raised alert says about its subject: the AlertView's facts (lib/domain/schemas/alerts.ts), and the rule's own detail. */
export type AlertFacts = Pick<AlertView, 'holder' | 'previousHolder' | 'token' | 'previousToken' | 'ttlMs' | 'marginMs' | 'gapMs'> & {
  /** The rule's own figures (a flapping rule's count, a force action's actor...), or null. */
  detail: Record<string, unknown> | null;
};

/** The facts of an alert that has none (a source, a test message): every one empty. */
export const NO_FACTS: AlertFacts = { holder: null, previousHolder: null, token: null, previousToken: null, ttlMs: null, marginMs: null, gapMs: null, detail: null };

export type AlertDecision<T extends string = AlertRuleType> =
  | { op: 'raise'; rule: AlertRule<T>; subject: AlertSubject; severity: AlertSeverity; summary: string; facts: AlertFacts; resolveAfterMs: number | null }
  | { op: 'clear'; rule: AlertRule<T>; subject: AlertSubject; why: string };

/** A subject's identity within a rule: the lease id, or the source for source-wide alerts. */
export const subjectId = (subject: AlertSubject) => subject.leaseId ?? `source:${subject.source}`;

/** A lease as the subject of an alert. */
export const leaseSubject = (lease: LeaseFacts): AlertSubject => ({ source: lease.source, leaseId: lease.id, leaseKey: lease.key });
