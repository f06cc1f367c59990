// source_down: a source unreadable for longer than afterMs. Its subject is the source, not a
// lease. A condition: raised once, cleared when the source answers again.
import { z } from 'zod';
import { scopeCovers } from '../alert-scope';
import { ms, said } from '../alert-text';
import { defineAlertRule, param } from './define';
import type { AlertSubject } from './model';

const sourceSubject = (source: string): AlertSubject => ({ source, leaseId: null, leaseKey: null });

export const sourceDown = defineAlertRule({
  type: 'source_down',
  severity: 'critical',
  describe: 'a source unreadable for longer than afterMs',
  params: z.strictObject({ afterMs: param.duration({ label: 'After (duration)', words: 'for longer than {}', max: 30 * 86_400_000, default: 30_000 }) }),
  evaluation: () => {
    const downSince = new Map<string, { mono: number; reason: string | null }>();
    return {
      on(input, nowMono, act) {
        if (input.type !== 'source') return;
        if (!input.up) {
          // Down again while down does not restart the clock.
          if (!downSince.has(input.source)) downSince.set(input.source, { mono: nowMono, reason: input.reason });
          return;
        }
        downSince.delete(input.source);
        act.clearAll(sourceSubject(input.source), 'readable again');
      },
      tick(nowMono, act) {
        for (const { rule, params } of act.rules) {
          for (const [source, down] of downSince) {
            if (nowMono - down.mono < params.afterMs || !scopeCovers(rule.scope, source, null)) continue;
            act.raise(rule, sourceSubject(source), {
              summary: `source ${source} has been unreadable for ${ms(nowMono - down.mono)}${down.reason ? `: ${said(down.reason, 200)}` : ''}`,
              facts: { detail: { downForMs: Math.round(nowMono - down.mono), reason: down.reason } },
              once: true,
            });
          }
        }
      },
      forget(source) {
        downSince.delete(source);
      },
    };
  },
});
