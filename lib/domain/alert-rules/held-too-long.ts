// held_too_long: one holder (the same token) for longer than afterMs, a stuck job. A condition:
// cleared when another holder has it or nobody does. A stale lease is not judged, and the time
// it was not watched does not count.
import { z } from 'zod';
import { ms, show } from '../alert-text';
import { covers, defineAlertRule, param } from './define';
import { leaseSubject, type LeaseFacts } from './model';

export const heldTooLong = defineAlertRule({
  type: 'held_too_long',
  severity: 'warning',
  describe: 'one holder for longer than afterMs (a stuck job)',
  params: z.strictObject({ afterMs: param.duration({ label: 'After (duration)', words: 'for longer than {}', max: 30 * 86_400_000, default: 3_600_000 }) }),
  evaluation: () => {
    const heldSince = new Map<string, { mono: number; lease: LeaseFacts; holder: string; token: string | null }>();
    return {
      on(input, nowMono, act) {
        if (input.type !== 'seen') return;
        const { lease } = input;
        const held = heldSince.get(lease.id);
        if (lease.stale) {
          if (held) held.lease = lease;
          return;
        }
        if (held?.lease.stale) held.mono = nowMono;
        if (lease.state !== 'held') {
          if (heldSince.delete(lease.id)) act.clearAll(leaseSubject(lease), 'not held now');
          return;
        }
        if (act.rules.length === 0) return;
        if (held && held.holder === lease.holder && held.token === lease.token) {
          held.lease = lease;
          return;
        }
        if (held) act.clearAll(leaseSubject(lease), 'another holder');
        heldSince.set(lease.id, { mono: nowMono, lease, holder: lease.holder!, token: lease.token });
      },
      tick(nowMono, act) {
        for (const { rule, params } of act.rules) {
          for (const held of heldSince.values()) {
            if (held.lease.stale || nowMono - held.mono < params.afterMs || !covers(rule, held.lease)) continue;
            act.raise(rule, leaseSubject(held.lease), {
              summary: `${show(held.lease.id)}: held by ${show(held.holder)} for ${ms(nowMono - held.mono)}`,
              facts: { holder: held.holder, token: held.token, ttlMs: held.lease.ttlMs, detail: { heldForMs: Math.round(nowMono - held.mono) } },
              once: true,
            });
          }
        }
      },
      forget(source) {
        for (const [id, entry] of heldSince) if (entry.lease.source === source) heldSince.delete(id);
      },
    };
  },
});
