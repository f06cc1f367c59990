import { describe, expect, it } from 'vitest';
import { newTrackedLease, type TrackedLease } from '../domain/tracked-lease';
import { observedUnchanged } from './observe-parts';

const read = (startedMono: number) => ({ source: 'pg', backend: 'postgres' as const, startedMono, startedWall: 1_700_000_000_000 + startedMono });

describe('observedUnchanged: a partial read that speaks for whole tables', () => {
  it('counts the leases of those tables it did not cover as observed by it, and nothing else', () => {
    const known = new Map<string, TrackedLease>();
    for (const key of ['leases/a', 'leases/b', 'leases/c', 'other/a', 'leases/stale', 'leases/later']) known.set(key, newTrackedLease(read(1_000), 'lock', key));
    known.get('leases/stale')!.stale = true;
    known.get('leases/later')!.observedAtMono = 3_000; // moved forward by a read begun later
    observedUnchanged(known, ['leases/'], ['leases/b'], read(2_000));
    const at = Object.fromEntries([...known].map(([key, lease]) => [key, lease.observedAtMono]));
    expect(at).toEqual({ 'leases/a': 2_000, 'leases/b': 1_000, 'leases/c': 2_000, 'other/a': 1_000, 'leases/stale': 1_000, 'leases/later': 3_000 });
    expect(known.get('leases/a')!.observedAtWall).toBe(read(2_000).startedWall);
  });

  it('without prefixes (a poll of a push source), touches nothing', () => {
    const known = new Map([['leases/a', newTrackedLease(read(1_000), 'lock', 'leases/a')]]);
    observedUnchanged(known, undefined, [], read(2_000));
    observedUnchanged(known, [], [], read(2_000));
    expect(known.get('leases/a')!.observedAtMono).toBe(1_000);
  });
});
