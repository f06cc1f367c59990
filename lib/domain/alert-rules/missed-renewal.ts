// missed_renewal: a held lease reached its deadline without renewal or release (it expired).
// An event: resolved when the lease is held again or released, or by itself after
// resolveAfterMs. A lease the backend deleted when it ran out (an etcd or Redis key) and that
// nobody takes again no longer exists: its alert must not fire (and be re-sent) for ever. What
// lasts, an election or lock left without a holder, is `leaderless`'s to say.
import { z } from 'zod';
import { show } from '../alert-text';
import { defineAlertRule, resolveAfter } from './define';
import { leaseSubject } from './model';

/** The changes after which a lease has moved on: a missed (or late) renewal is over. */
export const MOVED_ON: ReadonlySet<string> = new Set(['acquired', 'taken_over', 'released', 'observation_gap']);

export const missedRenewal = defineAlertRule({
  type: 'missed_renewal',
  severity: 'critical',
  describe: 'a held lease reached its deadline without renewal or release',
  params: z.strictObject({ resolveAfterMs: resolveAfter(900_000) }),
  evaluation: () => ({
    on(input, _now, act) {
      if (input.type !== 'change') return;
      const { lease, change } = input;
      if (MOVED_ON.has(change.type)) act.clearAll(leaseSubject(lease), change.type === 'released' ? 'released' : 'held again');
      if (change.type !== 'expired') return;
      for (const { rule, params } of act.covering(lease)) {
        act.raise(rule, leaseSubject(lease), {
          summary: `${show(lease.id)}: ${show(change.previousHolder)} missed its renewal; the lease expired${change.previousToken ? ` (token ${change.previousToken})` : ''}`,
          facts: { previousHolder: change.previousHolder, previousToken: change.previousToken, ttlMs: lease.ttlMs },
          resolveAfterMs: params.resolveAfterMs,
        });
      }
    },
  }),
});
