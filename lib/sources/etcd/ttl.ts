// Lease TTLs: which are due to be read in a poll (within a budget), reading them a batch at a
// time, and each wanted lease's remaining time carried forward from its last reading.
import type { Etcd3 } from 'etcd3';
import { breathe, ITEMS_PER_BREATH, systemClock, type Clock } from '../../time/clock';
import { nextReading, type TtlReading } from './ttl-proof';

/**
 * etcd has no call that returns many leases' TTLs at once, so each costs an RPC. A lease's
 * TTL is read when it was never read, when a quarter of its TTL has passed since its last
 * reading (so a holder renewing every third of it, as is usual, is seen at each renewal), or when
 * its time is nearly up; at most TTL_READS_PER_POLL per poll, the longest unread first.
 * Between readings its remaining time is carried forward on our clock: its key still exists,
 * so it is held, and a renewal shows at its next reading. Expiries and releases do not wait
 * for this: the key's deletion comes through the watch.
 */
const TTL_READS_PER_POLL = 1_000;
const TTL_READ_CONCURRENCY = 32;

export type { TtlReading } from './ttl-proof';
/** A lease's current estimate (remainingMs below 0 when proven to have run out, ttl-proof.ts); null: found gone at its last reading. */
export type TtlEstimate = { remainingMs: number | null; ttlMs: number } | null;

/** Reads one lease's TTL and records what it shows with what was read of it before; `onRead` hears the new picture. */
export async function readTtl(client: Etcd3, ttlReadings: Map<string, TtlReading>, leaseId: string, onRead?: (leaseId: string, reading: TtlReading) => void, clock: Clock = systemClock): Promise<TtlReading> {
  const startedAt = clock.mono();
  const { TTL, grantedTTL } = await client.leaseClient.leaseTimeToLive({ ID: leaseId });
  // Negative: expired or revoked between the two reads.
  const reading = nextReading(ttlReadings.get(leaseId), Number(TTL), Number(grantedTTL) * 1000, startedAt, clock.mono());
  ttlReadings.set(leaseId, reading);
  onRead?.(leaseId, reading);
  return reading;
}

/** Reads the TTLs that are due (within this poll's budget), and returns every wanted lease's current estimate. */
export async function leaseTtls(
  client: Etcd3,
  ttlReadings: Map<string, TtlReading>,
  wanted: string[],
  pollMs: number,
  readNow?: Set<string>,
  onRead?: (leaseId: string, reading: TtlReading) => void,
  clock: Clock = systemClock,
): Promise<Map<string, TtlEstimate>> {
  const unique = [...new Set(wanted)];
  const now = clock.mono();
  const due = (id: string) => {
    const reading = ttlReadings.get(id);
    if (!reading) return true; // never read, or gone at its last reading
    if (reading.ranOutBy !== null) return false; // proven run out: it stays so
    const age = now - reading.readAt;
    return age >= Math.max(pollMs, reading.ttlMs / 4) || reading.remainingMs - age < 2 * pollMs;
  };
  const order = unique
    .filter(due)
    .map((id) => ({ id, readAt: ttlReadings.get(id)?.readAt ?? -Infinity }))
    .sort((a, b) => a.readAt - b.readAt)
    .slice(0, TTL_READS_PER_POLL)
    .map((entry) => entry.id);
  for (let i = 0; i < order.length; i += TTL_READ_CONCURRENCY) {
    const batch = order.slice(i, i + TTL_READ_CONCURRENCY);
    await Promise.all(batch.map((id) => readTtl(client, ttlReadings, id, onRead, clock)));
    for (const id of batch) readNow?.add(id);
  }
  const after = clock.mono();
  const result = new Map<string, TtlEstimate>();
  let done = 0;
  for (const id of unique) {
    if (++done % ITEMS_PER_BREATH === 0) await breathe();
    if (!ttlReadings.has(id)) continue; // not read yet: unknown, not gone
    const reading = ttlReadings.get(id);
    // etcd reports whole seconds, rounded down: "0" means less than a second is left, or that
    // the lease ran out less than a second ago and etcd's lessor (which looks every 500 ms)
    // has not revoked it yet; one reading does not tell the two apart. Until two readings
    // prove it ran out (ttl-proof.ts) or etcd revokes it, it counts as held.
    // While a reading says at least some time is left it gives the earliest expiry; once that
    // has passed (a 0, or a reading carried forward beyond it) it says nothing more of it:
    // "null" keeps the last estimate (clamping to "1 ms left" would move the expiry forward
    // with the clock, and that looks like a renewal).
    // Proven run out: it ran out at the earliest its expiry can have been (within a step of the
    // readings, when its 1 → 0 step was seen), reported as time past (negative).
    if (reading && reading.ranOutBy !== null) {
      result.set(id, { remainingMs: Math.min(0, Math.round(reading.earliestEnd - after)), ttlMs: reading.ttlMs });
      continue;
    }
    // The earliest expiry over every reading so far: a reading of 1 s made just before another
    // of 0 still says more than the 0 does.
    const left = reading ? Math.round(reading.earliestEnd - after) : 0;
    result.set(id, reading ? { remainingMs: left > 0 ? left : null, ttlMs: reading.ttlMs } : null);
  }
  return result;
}
