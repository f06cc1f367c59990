// force_action alerts: raised where the action is taken (lib/admin, the server process),
// not by the collector, which sees only that the lease changed. The same evaluator decides;
// the alert and its deliveries are written in one transaction, and resolve by themselves after
// the rule's hold time (lib/db/alerts.ts sweepAlerts). A failure here never fails the action.
import type { Store } from '../db';
import { applyAlertWrites } from '../db/alerts';
import { loadRules } from '../db/alert-rules';
import { AlertEvaluator } from '../domain/alert-rules';
import type { ForceEventType } from '../domain/admin-actions';
import type { LeaseView } from '../domain/types';
import { alertWrite } from './engine';
import { alertLinker } from './link';
import { systemClock, type Clock } from '../time/clock';
import { logger, type Logger } from '../log';

export type ForcedAction = {
  lease: LeaseView;
  /** The action's event (lib/domain/admin-actions.ts eventType). */
  action: ForceEventType;
  actor: string;
  reason: string;
  previousToken: string | null;
  newToken: string | null;
  auditId: string | null;
};

/**
 * `clock`: what the rules' hold times and the alert's times are read on (default: the system
 * clock); `log`: where a raised alert is told (default: the process's `alerts` logger).
 */
export async function raiseForceAlert(
  store: Store,
  forced: ForcedAction,
  publicUrl: string | undefined,
  { clock = systemClock, log = logger('alerts') }: { clock?: Clock; log?: Logger } = {},
): Promise<number> {
  const { rules } = await loadRules(store);
  if (!rules.some((rule) => rule.enabled && rule.type === 'force_action')) return 0;
  const { lease } = forced;
  const decisions = new AlertEvaluator(rules).apply(
    {
      type: 'forced',
      lease: { id: lease.id, source: lease.source, key: lease.key, kind: lease.kind, state: lease.state, stale: lease.stale, holder: lease.holder, lastHolder: lease.lastHolder, token: lease.token, lastToken: null, ttlMs: lease.ttlMs, candidates: lease.candidates.length },
      action: forced.action,
      actor: forced.actor,
      reason: forced.reason,
      previousToken: forced.previousToken,
      newToken: forced.newToken,
      auditId: forced.auditId,
    },
    clock.mono(),
  );
  const applied = await applyAlertWrites(store, decisions.map(alertWrite), { linkOf: alertLinker(publicUrl), nowWall: clock.wall() });
  if (applied.queued > 0) store.outbox.changed();
  for (const alert of applied.fired) log.info({ rule: alert.rule.type, lease: alert.leaseId, auditId: forced.auditId }, `alert firing: ${alert.rule.type}: ${alert.summary}`);
  return applied.fired.length + applied.repeated;
}
