import { describe, expect, it } from 'vitest';
import { applyRead } from '../domain/apply-read';
import type { Observation } from '../domain/observe';
import { newTrackedLease, type TrackedLease } from '../domain/tracked-lease';
import { observedUnchanged } from './observe-parts';

const read = (startedMono: number) => ({ source: 'pg', backend: 'postgres' as const, startedMono, startedWall: 1_700_000_000_000 + startedMono });

describe('observedUnchanged: a partial read that speaks for whole tables', () => {
  it('counts the leases of those tables it did not cover as observed by it, and nothing else', async () => {
    const known = new Map<string, TrackedLease>();
    for (const key of ['leases/a', 'leases/b', 'leases/c', 'other/a', 'leases/stale', 'leases/later']) known.set(key, newTrackedLease(read(1_000), 'lock', key));
    known.get('leases/stale')!.stale = true;
    known.get('leases/later')!.observedAtMono = 3_000; // moved forward by a read begun later
    await observedUnchanged(known, ['leases/'], ['leases/b'], read(2_000));
    const at = Object.fromEntries([...known].map(([key, lease]) => [key, lease.observedAtMono]));
    expect(at).toEqual({ 'leases/a': 2_000, 'leases/b': 1_000, 'leases/c': 2_000, 'other/a': 1_000, 'leases/stale': 1_000, 'leases/later': 3_000 });
    expect(known.get('leases/a')!.observedAtWall).toBe(read(2_000).startedWall);
  });

  it('without prefixes (a poll of a push source), touches nothing', async () => {
    const known = new Map([['leases/a', newTrackedLease(read(1_000), 'lock', 'leases/a')]]);
    await observedUnchanged(known, undefined, [], read(2_000));
    await observedUnchanged(known, [], [], read(2_000));
    expect(known.get('leases/a')!.observedAtMono).toBe(1_000);
  });

  it('a renewal then seen is placed within one poll of it: the late-renewal rule allows for one poll, not for the whole time since the row last changed', async () => {
    const lease = (remainingMs: number): Observation => ({ key: 'leases/a', kind: 'lock', holder: 'w', token: 1n, ttlMs: null, remainingMs, candidates: [] });
    const at = (mono: number) => ({ ...read(mono), finishedMono: mono + 5, afterGap: false });
    const margins = async (touch: boolean) => {
      const known = new Map<string, TrackedLease>();
      applyRead(known, [lease(12_000)], at(0), ['leases/a']);
      // Polls every second find the row unchanged; the tenth finds it renewed.
      if (touch) for (let t = 1_000; t < 10_000; t += 1_000) await observedUnchanged(known, ['leases/'], [], read(t));
      return applyRead(known, [lease(12_000)], at(10_000), ['leases/a']).renewals.map((r) => r.renewal.marginUncertaintyMs);
    };
    const [withPolls] = await margins(true);
    const [without] = await margins(false);
    expect(withPolls).toBeLessThanOrEqual(1_100);
    expect(without).toBeGreaterThanOrEqual(10_000);
  });
});
