// late_holder: a holder reports renewals that ran late against its own schedule (an event-loop
// stall, a GC pause, a starved CPU) by more than latePercent % of the lease's TTL: the margin
// the backend sees is eaten from the holder's side. Holders say how late each renewal ran in
// their reports (POST /api/v1/telemetry, `lateMs`). A condition per lease: cleared when every
// holder that ran late has since reported renewals in time, or the lease moved on.
import { z } from 'zod';
import { ms, show } from '../alert-text';
import { defineAlertRule, param } from './define';
import { MOVED_ON } from './missed-renewal';
import { leaseSubject } from './model';

export const lateHolder = defineAlertRule({
  type: 'late_holder',
  severity: 'warning',
  describe: "a holder's renewals running later than latePercent % of the TTL against its own schedule",
  params: z.strictObject({ latePercent: param.percent({ label: 'Fires above this % of the TTL late', words: 'more than {} % of the TTL late', default: 30 }) }),
  evaluation: () => {
    /** Per lease: the holders late in their last report. */
    const late = new Map<string, Set<string>>();
    return {
      on(input, _now, act) {
        if (input.type === 'change' && MOVED_ON.has(input.change.type) && late.delete(input.lease.id)) act.clearAll(leaseSubject(input.lease), 'another grant');
        if (input.type !== 'claim' || input.lateMaxMs === null) return;
        const { lease, holder, lateMaxMs } = input;
        // The TTL the holder asked for; else the backend's (a Redis key does not keep it).
        const ttlMs = input.ttlMs ?? lease.ttlMs;
        if (ttlMs === null || ttlMs <= 0) return;
        const percent = (100 * lateMaxMs) / ttlMs;
        let isLate = false;
        for (const { rule, params } of act.covering(lease)) {
          if (percent <= params.latePercent) continue;
          isLate = true;
          act.raise(rule, leaseSubject(lease), {
            summary: `${show(lease.id)}: ${show(holder)} renewed ${ms(lateMaxMs)} late against its own schedule (${percent.toFixed(0)} % of the ${ms(ttlMs)} TTL)`,
            facts: { holder, token: input.token, ttlMs, detail: { lateMs: Math.round(lateMaxMs * 10) / 10, latePercent: Math.round(percent * 10) / 10 } },
          });
        }
        const holders = late.get(lease.id) ?? new Set<string>();
        if (isLate) {
          late.set(lease.id, holders.add(holder));
          return;
        }
        // In time: this holder is no longer late; the lease's alert ends when none is.
        holders.delete(holder);
        if (holders.size > 0) return;
        late.delete(lease.id);
        act.clearAll(leaseSubject(lease), 'renewals in time again');
      },
      forget(source) {
        for (const id of late.keys()) if (id.startsWith(`${source}/`)) late.delete(id);
      },
    };
  },
});
