// Proving expiries as they happen: etcd deletes a lease's keys only when its lessor gets round
// to revoking it (every 500 ms), and a TTL reading counts whole seconds, so neither the watch
// nor the polls see a missed renewal until up to a second after it. While the watch runs, this
// loop reads the TTL of each lease nearing its end at the moments that prove it ran out
// (ttl-proof.ts): every STEP_MS from the earliest moment its reading can step from 1 to 0, and
// once more a second after that step. A lease proven run out is named in a hint at once: the
// collector reads it again and finds it expired (its estimate says so), typically within
// STEP_MS and two round trips of its expiry. Leases that are renewed in time are read by it
// about once per renewal when their TTL is short (a 3 s TTL renewed every second), and then a
// reading that shows the renewal is named in a hint too (TELL_AFTER_MS): the collector's
// estimate of the earliest expiry stays current, so a release right after is judged a release
// (a stale estimate made a clean release look like a missed renewal). With a granted TTL under
// 3 s nothing can be proven and etcd's revocation settles an expiry; such a lease is read twice
// a second so that its releases are judged against a current estimate.
import { deadlineOf, unlessAborted } from '../../time/clock';
import type { ChangeHint } from '../types';
import type { EtcdState } from './state';
import { readTtl } from './ttl';
import { nextProofReadAt, type TtlReading } from './ttl-proof';
import { leaseKeysOf } from './watch';

/** How often a lease is read while its reading may step from 1 to 0. */
const STEP_MS = 20;
/** Leases read per round (their end windows overlap only when many run out together). */
const READS_PER_ROUND = 256;
/**
 * Proof reads per second, at most, per source: leases with short TTLs renewed in time still
 * come near their earliest possible end once a renewal interval (a 3 s TTL renewed every second
 * is read about once a second), so thousands of them must not turn into an unbounded load on
 * etcd; past the budget, the rest wait for the next second (or for etcd's revocation).
 */
const READS_PER_SECOND = 2_000;
const READ_CONCURRENCY = 32;
/** After a failed round, its leases wait this long (the source's own reads report the failure). */
const RETRY_MS = 500;
/** A batch of reads not answered within this is given up on. */
const BATCH_TIMEOUT_MS = 2_000;
/** A reading that moves a lease's earliest expiry this far past what the collector was told is told at once. */
const TELL_AFTER_MS = 250;
/** The reasons of this loop's hints: a lease proven run out (or found gone), or renewed. */
export const PROVEN_ENDED = 'its lease ran out, or is gone';
export const RENEWED = 'its lease was renewed';

/** Puts a lease's next proof read in the queue (or takes it out), after any reading of its TTL. */
export function scheduleProofRead(state: EtcdState, leaseId: string, reading: TtlReading): void {
  if (!state.proofLoop) return;
  const at = nextProofReadAt(reading, STEP_MS);
  if (at === null) state.proofReads.delete(leaseId);
  else {
    state.proofReads.set(leaseId, at);
    state.proofLoop.wake(at);
  }
}

/** The lease keys (single keys, or elections) held by these leases, as the mirror knows them. */
function keysOfLeases(state: EtcdState, leaseIds: Set<string>): string[] {
  const keys = new Set<string>();
  for (const kv of state.mirror.values()) if (leaseIds.has(String(kv.lease))) for (const key of leaseKeysOf(kv)) keys.add(key);
  return [...keys];
}

/** Runs until the signal aborts, naming each lease proven run out in a hint. */
export async function proveExpiries(state: EtcdState, onHint: (hint: ChangeHint) => void, signal: AbortSignal): Promise<void> {
  const { client, clock, ttlReadings, proofReads } = state;
  let wakeAt = Infinity;
  let wake: (() => void) | null = null;
  const budget = { since: -Infinity, left: READS_PER_SECOND };
  state.proofLoop = {
    wake: (at) => {
      if (at < wakeAt) wake?.();
    },
  };
  try {
    while (!signal.aborted) {
      wakeAt = proofReads.nextAt();
      const waitMs = Math.min(Math.max(0, wakeAt - clock.mono()), 60_000);
      if (waitMs > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, waitMs);
          function done() {
            clearTimeout(timer);
            signal.removeEventListener('abort', done);
            wake = null;
            resolve();
          }
          wake = done;
          signal.addEventListener('abort', done, { once: true });
        });
        continue;
      }
      wakeAt = Infinity;
      const now = clock.mono();
      if (now - budget.since >= 1_000) Object.assign(budget, { since: now, left: READS_PER_SECOND });
      if (budget.left <= 0) {
        await clock.sleep(budget.since + 1_000 - now, signal);
        continue;
      }
      const due = proofReads.takeDue(now, Math.min(READS_PER_ROUND, budget.left));
      budget.left -= due.length;
      // Leases proven run out (or found gone), and leases renewed well past what the collector knows.
      const ended = new Set<string>();
      const renewed = new Set<string>();
      for (let i = 0; i < due.length && !signal.aborted; i += READ_CONCURRENCY) {
        const batch = due.slice(i, i + READ_CONCURRENCY);
        // A batch that etcd does not answer within BATCH_TIMEOUT_MS is given up on (a stuck call
        // must not hold this loop, nor the source's shutdown, which waits for it).
        const deadline = deadlineOf(clock, signal, BATCH_TIMEOUT_MS);
        try {
          const reads = Promise.all(batch.map((id) => readTtl(client, ttlReadings, id, (leaseId, reading) => scheduleProofRead(state, leaseId, reading), clock)));
          const readings = await unlessAborted(reads, deadline.signal, () => new Error('etcd did not answer'));
          batch.forEach((id, index) => {
            const reading = readings[index];
            if (!reading || reading.ranOutBy !== null) ended.add(id);
            else if (reading.earliestEnd - (state.toldEnds.get(id) ?? -Infinity) >= TELL_AFTER_MS) renewed.add(id);
          });
        } catch {
          // etcd did not answer: these leases are read again a little later; the source's polls
          // say it is down if it stays so, and then nothing of it is judged.
          for (const id of batch) if (!proofReads.has(id)) proofReads.set(id, clock.mono() + RETRY_MS);
        } finally {
          deadline.dispose();
        }
      }
      if (ended.size > 0) onHint({ keys: keysOfLeases(state, ended), reason: PROVEN_ENDED });
      if (renewed.size > 0) onHint({ keys: keysOfLeases(state, renewed), reason: RENEWED });
    }
  } finally {
    state.proofLoop = null;
    proofReads.clear();
  }
}
