// force_action: someone force-expired or force-released a lease (lib/admin): who, why and the
// tokens. An event, resolved by itself after resolveAfterMs.
import { z } from 'zod';
import { ADMIN_ACTIONS, actionOfEvent } from '../admin-actions';
import { said, show } from '../alert-text';
import { defineAlertRule, resolveAfter } from './define';
import { leaseSubject } from './model';

export const forceAction = defineAlertRule({
  type: 'force_action',
  severity: 'info',
  describe: `someone ${Object.values(ADMIN_ACTIONS)
    .map((row) => row.done)
    .join(' or ')} a lease`,
  params: z.strictObject({ resolveAfterMs: resolveAfter(300_000) }),
  evaluation: () => ({
    on(input, _now, act) {
      if (input.type !== 'forced') return;
      const { lease } = input;
      const verb = actionOfEvent(input.action)?.done ?? input.action;
      for (const { rule, params } of act.covering(lease)) {
        act.raise(rule, leaseSubject(lease), {
          summary: `${show(lease.id)}: ${verb} by ${said(input.actor, 80)}${input.newToken ? ` (token ${input.previousToken ?? '?'} → ${input.newToken})` : ''}: ${said(input.reason, 200)}`,
          facts: { previousHolder: lease.holder, previousToken: input.previousToken, token: input.newToken, ttlMs: lease.ttlMs, detail: { action: input.action, actor: input.actor, reason: input.reason, auditId: input.auditId } },
          resolveAfterMs: params.resolveAfterMs,
        });
      }
    },
  }),
});
