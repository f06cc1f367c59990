// split_brain: a holder believes it holds a lease that the backend shows held by another
// holder (or under another token), or expired or free; or two holders believe they hold it at
// once; for longer than graceMs. The zombie leader fencing exists for. Holders say what they
// believe in their reports (POST /api/v1/telemetry: `claims`, `token`, and until when,
// `claimForMs`). A condition: cleared when the claims and the backend agree again (a claim
// ended, ran out, or the backend shows the claimant holding). A stale lease, or one the
// backend holds in a shape Leasehold cannot read, is not judged.
import { z } from 'zod';
import { ms, show } from '../alert-text';
import { defineAlertRule, param, type RaiseOptions } from './define';
import { leaseSubject, type LeaseFacts } from './model';

/** A standing claim: since when the holder has claimed without a break (or was first heard), and until when it stands. */
type Claim = { holder: string; token: string | null; sinceMono: number; untilMono: number };
type Watched = { lease: LeaseFacts; claims: Map<string, Claim>; conflictSince: number | null };
type Conflict = { why: string; claims: readonly Claim[] };

/** Whether the backend shows this claimant holding the lease (with its token, when both say one). */
const agreesWith = (lease: LeaseFacts, claim: Claim) => lease.state === 'held' && lease.holder === claim.holder && (claim.token === null || lease.token === null || claim.token === lease.token);

/** What is wrong with the lease's claims against the backend's view, or null when they agree. Those that disagree come first. */
export function claimConflict(lease: LeaseFacts, claims: readonly Claim[]): Conflict | null {
  if (claims.length === 0 || lease.stale || lease.state === 'unknown') return null;
  const against = claims.filter((claim) => !agreesWith(lease, claim));
  if (against.length === 0) return null;
  const named = against.map((claim) => `${show(claim.holder)}${claim.token === null ? '' : ` (token ${claim.token})`}`).join(' and ');
  const backend =
    lease.state === 'held' ? `the backend shows ${show(lease.holder)} holding it${lease.token === null ? '' : ` with token ${lease.token}`}` : `the backend shows it ${lease.state === 'free' ? 'free' : 'expired'}`;
  const together = claims.length > 1 ? `; ${claims.length} holders claim it at once` : '';
  return { why: `${named} ${against.length === 1 ? 'claims' : 'claim'} it while ${backend}${together}`, claims: [...against, ...claims.filter((claim) => agreesWith(lease, claim))] };
}

export const splitBrain = defineAlertRule({
  type: 'split_brain',
  severity: 'critical',
  describe: "a holder claims a lease the backend shows held by another or expired, or two holders claim it at once, for longer than graceMs",
  params: z.strictObject({ graceMs: param.duration({ label: 'For longer than (duration)', words: 'for longer than {}', max: 3_600_000, default: 1_000 }) }),
  evaluation: () => {
    const watched = new Map<string, Watched>();
    return {
      on(input, now, act) {
        if (input.type === 'claim') {
          let entry = watched.get(input.lease.id);
          if (!entry) {
            if (!input.claims || act.rules.length === 0) return;
            entry = { lease: input.lease, claims: new Map(), conflictSince: null };
            watched.set(input.lease.id, entry);
          }
          entry.lease = input.lease;
          if (input.claims && input.claimUntilMono !== null) {
            const sinceMono = Math.min(input.claimsSinceMono ?? now, now);
            entry.claims.set(input.holder, { holder: input.holder, token: input.token, sinceMono, untilMono: input.claimUntilMono });
          } else entry.claims.delete(input.holder);
          return;
        }
        if (input.type === 'seen' || input.type === 'change' || input.type === 'forced') {
          const entry = watched.get(input.lease.id);
          if (entry) entry.lease = input.lease;
        }
      },
      tick(nowMono, act) {
        for (const [id, entry] of watched) {
          for (const [holder, claim] of entry.claims) if (claim.untilMono <= nowMono) entry.claims.delete(holder);
          // Not judged while the backend cannot be read: neither raised nor cleared.
          if (entry.lease.stale) continue;
          const conflict = claimConflict(entry.lease, [...entry.claims.values()]);
          if (!conflict) {
            if (entry.conflictSince !== null) act.clearAll(leaseSubject(entry.lease), entry.claims.size === 0 ? 'the claim stopped' : 'the claims agree with the backend');
            entry.conflictSince = null;
            if (entry.claims.size === 0) watched.delete(id);
            continue;
          }
          // It began when both sides were as they are now: the claim made (holders report a
          // claim that lasts since when it started) and the backend's view taken. A zombie
          // that reports on waking has conflicted since the hand-over: raised at once.
          entry.conflictSince ??= Math.min(nowMono, Math.max(...conflict.claims.filter((c) => !agreesWith(entry.lease, c)).map((c) => c.sinceMono), entry.lease.viewSinceMono ?? nowMono));
          for (const { rule, params } of act.covering(entry.lease)) {
            if (nowMono - entry.conflictSince < params.graceMs) continue;
            act.raise(rule, leaseSubject(entry.lease), raiseOptions(entry.lease, conflict, nowMono - entry.conflictSince));
          }
        }
      },
      forget(source) {
        for (const [id, entry] of watched) if (entry.lease.source === source) watched.delete(id);
      },
    };
  },
});

/** The alert: names each claimant and its token, and the backend's view. */
function raiseOptions(lease: LeaseFacts, conflict: Conflict, forMs: number): RaiseOptions {
  const first = conflict.claims[0]!;
  // The alert's holder is the claimant the backend disagrees with; previousHolder, the holder the backend shows (or another claimant).
  const other = lease.state === 'held' ? { holder: lease.holder, token: lease.token } : (conflict.claims[1] ?? null);
  return {
    summary: `${show(lease.id)}: split brain for ${ms(forMs)}: ${conflict.why}`,
    facts: {
      holder: first.holder,
      token: first.token,
      previousHolder: other?.holder ?? null,
      previousToken: other?.token ?? null,
      ttlMs: lease.ttlMs,
      detail: {
        claims: conflict.claims.map((claim) => ({ holder: claim.holder, token: claim.token })),
        backend: { state: lease.state, holder: lease.holder, token: lease.token },
        forMs: Math.round(forMs),
      },
    },
    once: true,
  };
}
