// force_action: someone force-expired or force-released a lease (lib/admin): who, why and the
// tokens. An event, resolved by itself after resolveAfterMs.
import { z } from 'zod';
import { said, show } from '../alert-text';
import { defineAlertRule, resolveAfter } from './define';
import { leaseSubject } from './model';

export const forceAction = defineAlertRule({
  type: 'force_action',
  severity: 'info',
  describe: 'someone force-expired or force-released a lease',
  params: z.strictObject({ resolveAfterMs: resolveAfter(300_000) }),
  evaluation: () => ({
    on(input, _now, act) {
      if (input.type !== 'forced') return;
      const { lease } = input;
      const verb = input.action === 'force_expired' ? 'force-expired' : 'force-released';
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
