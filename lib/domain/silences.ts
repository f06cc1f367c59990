// Silences: for a while, alerts within a scope (and of one rule type, or all) are recorded but
// not delivered. When a silence ends, what is still firing and was never delivered is.
import { scopeCovers } from './alert-scope';
import type { AlertRuleType, AlertScope } from './alert-types';

export type Silence = {
  id: string;
  scope: AlertScope;
  /** Null: every rule type. */
  ruleType: AlertRuleType | null;
  startsAtWall: number;
  endsAtWall: number;
  reason: string;
  author: string;
};

export type SilenceSubject = { source: string; leaseId: string | null; ruleType: AlertRuleType };

/** Whether a silence in force at `nowWall` covers the subject. */
export function isSilenced(silences: readonly Silence[], subject: SilenceSubject, nowWall: number): boolean {
  return silences.some(
    (s) => s.startsAtWall <= nowWall && nowWall < s.endsAtWall && (s.ruleType === null || s.ruleType === subject.ruleType) && scopeCovers(s.scope, subject.source, subject.leaseId),
  );
}
