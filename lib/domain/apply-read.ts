// Applying one read of a source to everything known about its leases: the fast path for
// the lease that did not change (most of them, most reads), diffLease for the rest, and the
// bookkeeping the store needs (which rows to write, event and renewal sequence numbers).
import { boundObservation, clampWall, isHeld, type Observation, type ReadContext } from './observation';
import { diffLease } from './observe';
import { narrowedExpiry, TIMING_SLACK_MS, type LeaseChange, type Renewal, type TrackedLease } from './tracked-lease';
import { readUncertainty } from './transition';

export type AppliedRead = {
  /** Leases whose stored row must change (new, changed, renewed, no longer stale). */
  dirty: TrackedLease[];
  /** Of those, the ones whose only change is a renewal (their row can wait for a batch). */
  renewedOnly: Set<TrackedLease>;
  /** Changes with the sequence number each is stored under: a retried write never duplicates one. */
  events: { lease: TrackedLease; seq: number; change: LeaseChange }[];
  renewals: { lease: TrackedLease; seq: number; renewal: Renewal }[];
};

/**
 * Applies one read to what is known about a source's leases (updated in place).
 * `covered`: the keys a partial read speaks for; omitted for a full snapshot, where every
 * known lease missing from the read is gone.
 */
export function applyRead(known: Map<string, TrackedLease>, observations: readonly Observation[], read: ReadContext, covered?: readonly string[]): AppliedRead {
  const byKey = new Map(observations.map((o) => [o.key, boundObservation(o, read.startedWall)]));
  const keys = new Set<string>(covered ?? known.keys());
  for (const key of byKey.keys()) keys.add(key);
  const result: AppliedRead = { dirty: [], renewedOnly: new Set(), events: [], renewals: [] };
  for (const key of keys) {
    const prev = known.get(key);
    const observation = byKey.get(key);
    // Most leases, most reads: nothing changed. Say so without building a new picture.
    if (prev && observation && isUnchanged(prev, observation, read)) {
      prev.observedAtMono = read.startedMono;
      prev.observedAtWall = read.startedWall;
      // The same expiry, perhaps narrowed down (as diffLease does; the row shows no such noise).
      if (prev.state === 'held' && observation.remainingMs !== null) {
        Object.assign(prev, narrowedExpiry(prev, read.startedMono + observation.remainingMs, readUncertainty(observation, read)));
        prev.expiresAtWall = clampWall(Math.round(read.startedWall + (prev.expiresAtMono! - read.startedMono)));
      }
      continue;
    }
    const { next, changes, renewal } = diffLease(prev, observation, read);
    if (!next) continue;
    for (const change of changes) result.events.push({ lease: next, seq: ++next.eventSeq, change });
    if (renewal) {
      result.renewals.push({ lease: next, seq: ++next.renewalSeq, renewal });
      next.lastRenewal = { intervalMs: renewal.intervalMs, marginMs: renewal.marginMs };
    } else if (changes.some((change) => change.type === 'acquired' || change.type === 'taken_over' || change.type === 'released' || change.type === 'expired')) {
      next.lastRenewal = null; // a new grant, or none: the old grant's renewals say nothing of it
    }
    const changed = !prev || changes.length > 0 || rowChanged(prev, next);
    if (changed || renewal) {
      next.version = (prev?.version ?? 0) + 1;
      result.dirty.push(next);
    }
    if (!changed && renewal) result.renewedOnly.add(next);
    known.set(key, next);
  }
  return result;
}

/**
 * True when this read shows exactly what was known: same holder, token, queue, kind and
 * detail, and (for a held lease) an expiry that did not move forward beyond noise. Then
 * diffLease would produce no change, no renewal and an identical row.
 */
export function isUnchanged(prev: TrackedLease, o: Observation, read: ReadContext): boolean {
  if (read.afterGap || prev.stale || o.problem || prev.problem !== null || prev.kind !== o.kind) return false;
  // A counter of grants past the last token known: grants came and went unseen (unseen-grants.ts).
  if (o.issued !== undefined && o.issued > (prev.token ?? prev.lastToken ?? o.issued)) return false;
  if (!sameCandidates(prev.candidates, o.candidates) || !sameDetail(prev.detail, o.detail ?? null)) return false;
  if (isHeld(o)) {
    if (prev.state !== 'held' || o.holder !== prev.holder || o.token !== prev.token) return false;
    // No remaining time to judge by: unchanged unless it now has one, or reports another TTL.
    if (o.remainingMs === null) return prev.expiresAtMono === null && (o.ttlMs === null || o.ttlMs === prev.ttlMs);
    if (prev.expiresAtMono === null) return false;
    if (o.ttlMs !== null ? o.ttlMs !== prev.ttlMs : o.remainingMs > (prev.ttlMs ?? 0)) return false;
    // Not renewed (transition.ts, classifyStillHeld): the expiry did not pass the last estimate's latest.
    return read.startedMono + o.remainingMs <= prev.expiresAtMono + prev.expiryUncertaintyMs + TIMING_SLACK_MS;
  }
  // Not held before, not held now, nothing new about who last held it.
  if (prev.state === 'held') return false;
  if (o.holder === null || o.released) return prev.state === 'free' && (o.token === null || o.token === prev.lastToken || o.token === prev.token);
  return prev.state === 'expired' && prev.lastHolder === o.holder && (o.token === null || o.token === prev.lastToken);
}

function sameCandidates(a: TrackedLease['candidates'], b: Observation['candidates']): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i]!.holder !== b[i]!.holder || a[i]!.token !== b[i]!.token) return false;
  return true;
}

function sameDetail(a: Record<string, unknown> | null, b: Record<string, unknown> | null): boolean {
  if (a === b) return true;
  if (a === null || b === null) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) {
    const x = a[key];
    const y = b[key];
    if (x === y) continue;
    if (typeof x !== 'object' || typeof y !== 'object' || JSON.stringify(x) !== JSON.stringify(y)) return false;
  }
  return true;
}

/** Whether what the stored row shows differs (timing noise in expiry estimates does not count). */
function rowChanged(prev: TrackedLease, next: TrackedLease): boolean {
  return (
    prev.stale !== next.stale ||
    prev.state !== next.state ||
    prev.holder !== next.holder ||
    prev.token !== next.token ||
    prev.problem !== next.problem ||
    prev.kind !== next.kind ||
    prev.ttlMs !== next.ttlMs ||
    !sameCandidates(prev.candidates, next.candidates) ||
    !sameDetail(prev.detail, next.detail)
  );
}
