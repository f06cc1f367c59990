import { describe, expect, it } from 'vitest';
import { nextProofReadAt, nextReading, type TtlReading } from './ttl-proof';

// A lessor as etcd keeps one lease: expiry E, moved to (keepalive + granted) by a keepalive
// made before E; a reading at server time t answers trunc((E − t) / 1 s) (toward zero), or -1
// once revoked (some time within 500 ms after E).
class Lessor {
  expiry: number;
  revokedAt: number;
  constructor(
    readonly grantedMs: number,
    grantedAt: number,
    private readonly revokeDelay: number,
  ) {
    this.expiry = grantedAt + grantedMs;
    this.revokedAt = this.expiry + revokeDelay;
  }
  keepalive(at: number) {
    if (at >= this.expiry) return; // too late: it waits for the revocation
    this.expiry = at + this.grantedMs;
    this.revokedAt = this.expiry + this.revokeDelay;
  }
  read(t: number): number {
    if (t >= this.revokedAt) return -1;
    return Math.trunc((this.expiry - t) / 1000);
  }
}

/** A seeded generator, so that a failure can be replayed. */
function random(seed: number) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

const STEP = 20;

function read(prev: TtlReading | undefined, lessor: Lessor, startedAt: number, rtt: () => number) {
  const t = startedAt + rtt();
  const finishedAt = t + rtt();
  return { reading: nextReading(prev, lessor.read(t), lessor.grantedMs, startedAt, finishedAt), finishedAt };
}

describe('etcd expiry proof', () => {
  it('one reading of 0 proves nothing: less than a second left looks the same as run out', () => {
    const first = nextReading(undefined, 1, 3_000, 0, 2);
    const zero = nextReading(first, 0, 3_000, 100, 102);
    expect(zero?.ranOutBy).toBeNull();
    // A second 0 too soon after it proves nothing either.
    expect(nextReading(zero, 0, 3_000, 600, 602)?.ranOutBy).toBeNull();
    // A second 0 a second after it does: the lease ran out by the first one's end + 1 s.
    expect(nextReading(zero, 0, 3_000, 1_115, 1_117)?.ranOutBy).toBe(1_102);
  });

  it('a reading of 1 or more between the two starts again (a renewal)', () => {
    const zero = nextReading(nextReading(undefined, 1, 3_000, 0, 2), 0, 3_000, 100, 102);
    const renewed = nextReading(zero, 2, 3_000, 700, 702);
    expect(renewed?.zero).toBeNull();
    expect(nextReading(renewed, 0, 3_000, 1_200, 1_202)?.ranOutBy).toBeNull();
  });

  it('a proof stands against a reading made before the lease ran out and answered late', () => {
    const zero = nextReading(nextReading(undefined, 1, 3_000, 0, 2), 0, 3_000, 100, 102);
    const proven = nextReading(zero, 0, 3_000, 1_115, 1_117);
    expect(proven?.ranOutBy).toBe(1_102);
    // Started at 90 ms (1 s left then), answered after the proof: it changes nothing.
    expect(nextReading(proven, 1, 3_000, 90, 1_200)).toBe(proven);
    // A reading made after it ran out that shows time left (a new leader's lessor extended it): believed.
    expect(nextReading(proven, 2, 3_000, 1_300, 1_302)?.ranOutBy).toBeNull();
  });

  it('a second 0 too long after the first could hide a renewal between them: it starts a new proof', () => {
    const zero = nextReading(undefined, 0, 3_000, 0, 2);
    const late = nextReading(zero, 0, 3_000, 2_500, 2_502);
    expect(late?.ranOutBy).toBeNull();
    expect(late?.zero).toEqual({ startedAt: 2_500, finishedAt: 2_502 });
  });

  it('makes no proof for a granted TTL under 3 s (but reads it every 500 ms to know its earliest expiry), and none once proven or gone', () => {
    expect(nextProofReadAt(nextReading(undefined, 1, 2_000, 0, 2), STEP)).toBe(502);
    expect(nextProofReadAt(null, STEP)).toBeNull();
    const zero = nextReading(undefined, 0, 2_000, 0, 2);
    expect(nextReading(zero, 0, 2_000, 1_100, 1_102)?.ranOutBy).toBeNull();
    const proven = nextReading(nextReading(nextReading(undefined, 1, 3_000, 0, 2), 0, 3_000, 100, 102), 0, 3_000, 1_115, 1_117);
    expect(nextProofReadAt(proven, STEP)).toBeNull();
  });

  // Leases kept alive every third of their TTL (some keepalives late, up to the whole TTL) until
  // a random moment, read on the proof's schedule or at a poll a quarter of the TTL later; with
  // `stalls`, one read in ten comes late by up to the TTL (a busy event loop, a slow network).
  function simulate(seed: number, stalls: boolean) {
    const rand = random(seed);
    const lateness: number[] = [];
    for (let lease = 0; lease < 2_000; lease++) {
      const grantedMs = [3_000, 4_000, 5_000, 10_000][lease % 4]!;
      const maxRtt = 1 + rand() * 8;
      const rtt = () => rand() * maxRtt;
      const lessor = new Lessor(grantedMs, 0, rand() * 500);
      const stopAt = rand() * 4 * grantedMs;
      const keepalives: number[] = [];
      for (let at = grantedMs / 3; at < stopAt; at += (grantedMs / 3) * (rand() < 0.2 ? 1 + 2 * rand() : 1)) keepalives.push(at);
      let reading: TtlReading | undefined;
      let now = 0;
      let k = 0;
      while (now < 8 * grantedMs && reading !== null && reading?.ranOutBy == null) {
        while (k < keepalives.length && keepalives[k]! <= now) lessor.keepalive(keepalives[k++]!);
        const result = read(reading, lessor, now, rtt);
        reading = result.reading;
        if (reading?.ranOutBy != null) {
          // Sound: it had run out, by the moment the proof names.
          expect(lessor.expiry, `lease ${lease}`).toBeLessThanOrEqual(reading.ranOutBy);
          expect(lessor.expiry, `lease ${lease}`).toBeLessThanOrEqual(result.finishedAt);
          lateness.push(result.finishedAt - lessor.expiry);
        }
        const next = nextProofReadAt(reading ?? null, STEP);
        now = Math.max(result.finishedAt, Math.min(next ?? Infinity, now + grantedMs / 4)) + (stalls && rand() < 0.1 ? rand() * grantedMs : 0);
      }
    }
    return lateness.sort((a, b) => a - b);
  }

  it('never proves a lease ran out before it did, and proves it soon after when read on schedule (simulated lessor, 2,000 leases)', () => {
    const lateness = simulate(20261204, false);
    // Most run out before etcd's revocation shows them gone; those are proven, soon after.
    expect(lateness.length).toBeGreaterThan(1_000);
    expect(lateness[Math.floor(lateness.length / 2)]!).toBeLessThan(STEP + 20);
    expect(lateness[lateness.length - 1]!).toBeLessThan(STEP + 60);
  });

  it('never proves a lease ran out before it did when reads come late', () => {
    expect(simulate(4242, true).length).toBeGreaterThan(200);
  });

  it('the same simulation catches a proof that ignores renewals between its two readings', () => {
    // The check above is only worth something if it fails on an unsound proof: take "two
    // readings of 0 a second apart" without the bound on the time between them.
    const unsound = (prev: TtlReading | undefined, seconds: number, startedAt: number, finishedAt: number): TtlReading => {
      const next = nextReading(prev, seconds, 1_000_000, startedAt, finishedAt);
      return next && next.ranOutBy === null && prev?.zero && seconds === 0 && startedAt >= prev.zero.finishedAt + 1_010 ? { ...next, ranOutBy: prev.zero.finishedAt + 1_000 } : next;
    };
    const lessor = new Lessor(3_000, 0, 400);
    let reading: TtlReading | undefined = unsound(undefined, lessor.read(2_100), 2_100, 2_100); // 0 (0.9 s left)
    lessor.keepalive(2_900); // renewed late but in time: E = 5,900
    reading = unsound(reading, lessor.read(5_200), 5_200, 5_200); // 0 again (0.7 s left)
    expect(reading?.ranOutBy).not.toBeNull();
    expect(lessor.expiry).toBeGreaterThan(reading!.ranOutBy!); // the unsound proof names an expiry that did not happen
    // The real one does not.
    const sound = nextReading(nextReading(undefined, 0, 3_000, 2_100, 2_100), 0, 3_000, 5_200, 5_200);
    expect(sound?.ranOutBy).toBeNull();
  });
});
