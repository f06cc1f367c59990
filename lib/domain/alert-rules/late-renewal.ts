// late_renewal: a renewal with less than marginPercent % of the TTL left. A condition: cleared
// by the next renewal in time, or when the lease has moved on (another grant).
import { z } from 'zod';
import { ms, show } from '../alert-text';
import { defineAlertRule, param } from './define';
import { MOVED_ON } from './missed-renewal';
import { leaseSubject } from './model';

export const lateRenewal = defineAlertRule({
  type: 'late_renewal',
  severity: 'warning',
  describe: 'a renewal with less than marginPercent % of the TTL left',
  params: z.strictObject({ marginPercent: param.percent({ label: 'Fires below this % of the TTL left', words: 'less than {} % of the TTL left', default: 20 }) }),
  evaluation: () => ({
    on(input, _now, act) {
      if (input.type === 'change' && MOVED_ON.has(input.change.type)) act.clearAll(leaseSubject(input.lease), 'another grant');
      if (input.type !== 'renewal') return;
      const { lease, marginMs, intervalMs, ttlMs } = input;
      // Late only when it surely was: the margin plus what the reading may be off by is still short.
      const surelyLeft = marginMs + (input.uncertaintyMs ?? 0);
      for (const { rule, params } of act.covering(lease)) {
        if (ttlMs === null || ttlMs <= 0) continue;
        if ((100 * surelyLeft) / ttlMs >= params.marginPercent) {
          act.clear(rule, leaseSubject(lease), 'renewed in time');
          continue;
        }
        act.raise(rule, leaseSubject(lease), {
          summary: `${show(lease.id)}: ${show(lease.holder)} renewed with ${ms(marginMs)} left of ${ms(ttlMs)} (${((100 * marginMs) / ttlMs).toFixed(0)} %)`,
          facts: {
            holder: lease.holder,
            token: lease.token,
            ttlMs,
            marginMs,
            detail: { intervalMs, marginPercent: Math.round((1000 * marginMs) / ttlMs) / 10, uncertaintyMs: input.uncertaintyMs ?? 0 },
          },
        });
      }
    },
  }),
});
