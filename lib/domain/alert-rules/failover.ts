// failover: a change of holder (health.ts says what one is), with the gap without a holder. An
// event: resolved when the new holder renews, or by itself after resolveAfterMs.
import { z } from 'zod';
import { ms, show } from '../alert-text';
import { isChangeOfHands } from '../health';
import { defineAlertRule, resolveAfter } from './define';
import { leaseSubject } from './model';

export const failover = defineAlertRule({
  type: 'failover',
  severity: 'warning',
  describe: 'a change of holder, with the gap',
  params: z.strictObject({ resolveAfterMs: resolveAfter(300_000) }),
  evaluation: () => ({
    on(input, _now, act) {
      // The new holder renews: the failover is behind us.
      if (input.type === 'renewal') act.clearAll(leaseSubject(input.lease), 'the new holder renewed');
      if (input.type !== 'change' || !isChangeOfHands(input.change)) return;
      const { lease, change } = input;
      for (const { rule, params } of act.covering(lease)) {
        act.raise(rule, leaseSubject(lease), {
          summary: `${show(lease.id)}: ${show(change.previousHolder)} → ${show(change.holder)}${change.gapMs !== null ? `, ${ms(change.gapMs)} without a holder` : ''}${change.token ? ` (token ${change.previousToken ?? '?'} → ${change.token})` : ''}`,
          facts: { holder: change.holder, previousHolder: change.previousHolder, token: change.token, previousToken: change.previousToken, ttlMs: lease.ttlMs, gapMs: change.gapMs, detail: change.type === 'taken_over' ? { takenOver: true } : null },
          resolveAfterMs: params.resolveAfterMs,
        });
      }
    },
  }),
});
