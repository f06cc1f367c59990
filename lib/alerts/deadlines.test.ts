import { afterEach, describe, expect, it } from 'vitest';
import { newTrackedLease, type TrackedLease } from '../domain/tracked-lease';
import { systemClock } from '../time/clock';
import { DeadlineTimers } from './deadlines';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const timers: DeadlineTimers[] = [];
afterEach(() => timers.splice(0).forEach((t) => t.stop()));

function held(key: string, inMs: number, uncertaintyMs = 0): TrackedLease {
  const now = systemClock.mono();
  return { ...newTrackedLease({ source: 's', backend: 'redis', startedMono: now, startedWall: Date.now() }, 'lock', key), state: 'held', holder: 'a', expiresAtMono: now + inMs, expiryUncertaintyMs: uncertaintyMs };
}

function watch() {
  const due: string[] = [];
  const t = new DeadlineTimers(systemClock, (keys) => due.push(...keys));
  timers.push(t);
  return { t, due };
}

describe('DeadlineTimers', () => {
  it('reads a lease whose deadline passed, and only that one', async () => {
    const { t, due } = watch();
    t.track(held('soon', 20));
    t.track(held('later', 60_000));
    await expect.poll(() => due[0], { timeout: 2_000, interval: 10 }).toBe('soon');
    expect(due).not.toContain('later');
  });

  it('forgets a deadline when the lease is renewed, released or stale', async () => {
    const { t, due } = watch();
    t.track(held('renewed', 20));
    t.track(held('renewed', 60_000));
    t.track(held('released', 20));
    t.track({ ...held('released', 20), state: 'free', holder: null });
    t.track(held('stale', 20));
    t.track({ ...held('stale', 20), stale: true });
    await sleep(150);
    expect(due).toEqual([]);
  });

  it('reads again a few times while it still shows the same deadline (within its uncertainty), then leaves it to the polls', async () => {
    const { t, due } = watch();
    const lease = held('stuck', 10, 500);
    t.track(lease);
    await expect.poll(() => due.length, { timeout: 2_000, interval: 5 }).toBeGreaterThanOrEqual(1);
    // A read shows it again with an estimate 300 ms off: the same deadline, so the re-checks go on.
    t.track({ ...lease, expiresAtMono: lease.expiresAtMono! + 300 });
    await expect.poll(() => due.length, { timeout: 5_000, interval: 20 }).toBe(6); // the first read and five re-checks
    await sleep(700);
    expect(due.length).toBe(6); // and no more
    expect(new Set(due)).toEqual(new Set(['stuck']));
    t.clear();
    expect(t.size).toBe(0);
  });

  it('waits quietly for a deadline beyond what a Node timer keeps (a forty-day TTL), instead of waking every millisecond', async () => {
    // A timer over 2^31 - 1 ms is taken as 1 ms: the timers woke a thousand times a second for such a lease.
    let looks = 0;
    const counting = { ...systemClock, mono: () => (looks++, systemClock.mono()) };
    const due: string[] = [];
    const t = new DeadlineTimers(counting, (keys) => due.push(...keys));
    timers.push(t);
    t.track(held('forty-days', 40 * 86_400_000));
    const armed = looks;
    await sleep(200);
    expect(looks - armed).toBe(0);
    expect(due).toEqual([]);
  });
});
