// leaderless: an election with candidates and no leader (or, with includeLocks, a lock that was
// held and is not now) for longer than afterMs. A condition: cleared when it is held again. A
// stale lease is not judged, and the time it was not watched does not count.
import { z } from 'zod';
import { ms, show } from '../alert-text';
import { covers, defineAlertRule, param } from './define';
import { leaseSubject, type LeaseFacts } from './model';

export const leaderless = defineAlertRule({
  type: 'leaderless',
  severity: 'critical',
  describe: 'an election with candidates and no leader (or, with includeLocks, a lock with no holder) for longer than afterMs',
  params: z.strictObject({
    afterMs: param.duration({ label: 'After (duration)', words: 'for longer than {}', max: 30 * 86_400_000, default: 30_000 }),
    includeLocks: param.flag({ label: 'Locks too, not only elections', words: ['elections only', 'locks too'], default: false }),
  }),
  evaluation: () => {
    const notHeldSince = new Map<string, { mono: number; lease: LeaseFacts }>();
    return {
      on(input, nowMono, act) {
        if (input.type !== 'seen') return;
        const { lease } = input;
        const notHeld = notHeldSince.get(lease.id);
        if (lease.stale) {
          // Its source (or table) cannot be read: nothing is judged, and the clock starts again when it is seen.
          if (notHeld) notHeld.lease = lease;
          return;
        }
        if (notHeld?.lease.stale) notHeld.mono = nowMono;
        if (lease.state === 'held') {
          notHeldSince.delete(lease.id);
          act.clearAll(leaseSubject(lease), 'held again');
          return;
        }
        if (act.rules.length === 0) return;
        if (notHeld) notHeld.lease = lease;
        else if (lease.lastHolder !== null || lease.candidates > 0) notHeldSince.set(lease.id, { mono: nowMono, lease });
      },
      tick(nowMono, act) {
        for (const { rule, params } of act.rules) {
          for (const { mono, lease } of notHeldSince.values()) {
            if (lease.stale || nowMono - mono < params.afterMs || !leaderlessFor(params.includeLocks, lease) || !covers(rule, lease)) continue;
            const what = lease.kind === 'election' ? `election with ${lease.candidates} candidate${lease.candidates === 1 ? '' : 's'}` : 'lock';
            act.raise(rule, leaseSubject(lease), {
              summary: `${show(lease.id)}: ${what} without a holder for ${ms(nowMono - mono)}`,
              facts: { previousHolder: lease.lastHolder, previousToken: lease.lastToken, ttlMs: lease.ttlMs, detail: { withoutHolderForMs: Math.round(nowMono - mono), candidates: lease.candidates } },
              once: true,
            });
          }
        }
      },
      forget(source) {
        for (const [id, entry] of notHeldSince) if (entry.lease.source === source) notHeldSince.delete(id);
      },
    };
  },
});

function leaderlessFor(includeLocks: boolean, lease: LeaseFacts): boolean {
  if (lease.kind === 'election') return lease.candidates > 0 || lease.lastHolder !== null;
  return includeLocks && lease.kind === 'lock' && lease.lastHolder !== null;
}
