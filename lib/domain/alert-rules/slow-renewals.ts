// slow_renewals: a source's canary lease (lib/collector/canary.ts) renews slowly or not at all:
// the p99 of its renewals' round trips over the last minute is above ttlPercent % of the
// canary's TTL, or a renewal failed. The backend itself is slow for every holder, before any
// real lease runs out. Its subject is the source. A condition: raised once, cleared by a
// renewal that succeeds while the minute's p99 is back under the threshold.
import { z } from 'zod';
import { scopeCovers } from '../alert-scope';
import { ms, said } from '../alert-text';
import { defineAlertRule, param } from './define';
import type { AlertInput, AlertSubject } from './model';

type CanaryInput = Extract<AlertInput, { type: 'canary' }>;

const sourceSubject = (source: string): AlertSubject => ({ source, leaseId: null, leaseKey: null });

/** Why this renewal is a problem at `thresholdMs`, or null when it is none. */
function trouble(input: CanaryInput, thresholdMs: number): string | null {
  if (!input.ok) return `a renewal of its canary ${failedHow(input)} after ${ms(input.rttMs)}`;
  if (input.p99Ms !== null && input.p99Ms > thresholdMs) return `its canary's renewals took ${ms(input.p99Ms)} at p99 over the last minute, above ${ms(thresholdMs)}`;
  return null;
}

const failedHow = (input: CanaryInput) =>
  input.outcome === 'lost' ? 'found the lease gone' : input.outcome === 'unavailable' ? 'got no answer' : `failed (${said(input.outcome, 40)})`;

export const slowRenewals = defineAlertRule({
  type: 'slow_renewals',
  severity: 'warning',
  describe: "a source's canary renewals slower than ttlPercent % of its TTL at p99, or one failing",
  params: z.strictObject({ ttlPercent: param.percent({ label: "Fires above this % of the canary's TTL (p99)", words: "above {} % of the canary's TTL", default: 25 }) }),
  evaluation: () => ({
    on(input, _now, act) {
      if (input.type !== 'canary' || input.call !== 'renew') return;
      const subject = sourceSubject(input.source);
      for (const { rule, params } of act.rules) {
        if (!scopeCovers(rule.scope, input.source, null)) continue;
        const thresholdMs = (input.ttlMs * params.ttlPercent) / 100;
        const why = trouble(input, thresholdMs);
        if (why === null) {
          act.clear(rule, subject, 'canary renewals in time');
          continue;
        }
        act.raise(rule, subject, {
          summary: `source ${input.source}: ${why} (canary TTL ${ms(input.ttlMs)})`,
          facts: {
            ttlMs: input.ttlMs,
            detail: { key: input.key, outcome: input.outcome, rttMs: round(input.rttMs), p99Ms: input.p99Ms === null ? null : round(input.p99Ms), thresholdMs: round(thresholdMs) },
          },
          once: true,
        });
      }
    },
  }),
});

const round = (value: number) => Math.round(value * 10) / 10;
