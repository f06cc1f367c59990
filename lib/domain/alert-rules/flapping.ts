// flapping: more than `changes` changes of holder within `windowMs`. A condition: cleared at a
// tick once the changes in the window are few enough again.
import { z } from 'zod';
import { ms, show } from '../alert-text';
import { isChangeOfHands } from '../health';
import { defineAlertRule, param } from './define';
import { leaseSubject, type LeaseFacts } from './model';

export const flapping = defineAlertRule({
  type: 'flapping',
  severity: 'warning',
  describe: 'more than `changes` changes of holder within `windowMs`',
  params: z.strictObject({
    changes: param.count({ label: 'Fires above this many changes of holder', words: 'more than {} changes', min: 1, max: 1000, default: 3 }),
    windowMs: param.duration({ label: 'Within (duration)', words: 'within {}', max: 7 * 86_400_000, default: 600_000 }),
  }),
  evaluation: () => {
    /** Per lease: when its hands changed, within the longest window of any rule. */
    const handChanges = new Map<string, { times: number[]; lease: LeaseFacts }>();
    return {
      on(input, nowMono, act) {
        if (input.type !== 'change' || !isChangeOfHands(input.change) || act.rules.length === 0) return;
        const { lease, change } = input;
        const flaps = handChanges.get(lease.id) ?? { times: [], lease };
        flaps.lease = lease;
        const longest = Math.max(...act.rules.map(({ params }) => params.windowMs));
        flaps.times = [...flaps.times.filter((t) => nowMono - t <= longest), nowMono];
        handChanges.set(lease.id, flaps);
        for (const { rule, params } of act.covering(lease)) {
          const count = flaps.times.filter((t) => nowMono - t <= params.windowMs).length;
          if (count <= params.changes) continue;
          act.raise(rule, leaseSubject(lease), {
            summary: `${show(lease.id)}: ${count} changes of holder within ${ms(params.windowMs)}`,
            facts: { holder: change.holder, token: change.token, ttlMs: lease.ttlMs, detail: { changes: count, windowMs: params.windowMs } },
          });
        }
      },
      tick(nowMono, act) {
        const longest = Math.max(0, ...act.rules.map(({ params }) => params.windowMs));
        for (const [id, flaps] of handChanges) {
          for (const { rule, params } of act.rules) {
            const recent = flaps.times.filter((t) => nowMono - t <= params.windowMs).length;
            if (recent <= params.changes) act.clear(rule, leaseSubject(flaps.lease), 'calmer now');
          }
          flaps.times = flaps.times.filter((t) => nowMono - t <= longest);
          if (flaps.times.length === 0) handChanges.delete(id);
        }
      },
      forget(source) {
        for (const [id, entry] of handChanges) if (entry.lease.source === source) handChanges.delete(id);
      },
    };
  },
});
