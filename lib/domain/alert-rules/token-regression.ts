// token_regression: a fencing token went down, or repeated for a new holder. Always critical,
// whatever the rule says: a fence that goes back lets a stale holder write. An event, resolved
// by itself after resolveAfterMs.
import { z } from 'zod';
import { show } from '../alert-text';
import { defineAlertRule, resolveAfter } from './define';
import { leaseSubject } from './model';

export const tokenRegression = defineAlertRule({
  type: 'token_regression',
  severity: 'critical',
  describe: 'a token went down or repeated for a new holder (always critical)',
  params: z.strictObject({ resolveAfterMs: resolveAfter(900_000) }),
  evaluation: () => ({
    on(input, _now, act) {
      if (input.type !== 'change' || input.change.type !== 'token_regression') return;
      const { lease, change } = input;
      for (const { rule, params } of act.covering(lease)) {
        act.raise(rule, leaseSubject(lease), {
          summary: `${show(lease.id)}: token went back from ${change.previousToken ?? '?'} to ${change.token ?? '?'} (holder ${show(change.holder)})`,
          facts: { holder: change.holder, previousHolder: change.previousHolder, token: change.token, previousToken: change.previousToken, ttlMs: lease.ttlMs },
          resolveAfterMs: params.resolveAfterMs,
          severity: 'critical',
        });
      }
    },
  }),
});
