// A history checker for fenced writes, in the spirit of Jepsen's lock tests: given what
// every writer was told about its writes and what the resource finally holds, it finds
// the two ways fencing can fail.
//
// 1. A write accepted with a token lower than one accepted before it: a stale holder got
//    through (the bug fencing exists to prevent).
// 2. A write its writer was told was accepted, missing from the final state: an
//    acknowledged write was lost.
// Writes whose outcome is unknown (the writer died or timed out) may be present or not.

export type WriteOutcome = 'accepted' | 'rejected' | 'unknown';

/** What a writer was told: one entry per attempted write. */
export type AttemptedWrite = { writer: string; value: string; token: bigint; outcome: WriteOutcome };

/** What the resource holds: every accepted write, in the order it was accepted. */
export type AcceptedWrite = { value: string; token: bigint };

export type Violation =
  | { kind: 'stale_write_accepted'; value: string; token: bigint; afterToken: bigint; message: string }
  | { kind: 'acknowledged_write_lost'; value: string; token: bigint; message: string }
  | { kind: 'rejected_write_present'; value: string; token: bigint; message: string };

export function checkFencedHistory(attempts: readonly AttemptedWrite[], final: readonly AcceptedWrite[]): Violation[] {
  const violations: Violation[] = [];
  let highest: bigint | null = null;
  for (const write of final) {
    if (highest !== null && write.token < highest) {
      violations.push({
        kind: 'stale_write_accepted',
        value: write.value,
        token: write.token,
        afterToken: highest,
        message: `write ${write.value} with token ${write.token} was accepted after a write with token ${highest}`,
      });
    }
    if (highest === null || write.token > highest) highest = write.token;
  }
  const present = new Set(final.map((write) => write.value));
  for (const attempt of attempts) {
    if (attempt.outcome === 'accepted' && !present.has(attempt.value)) {
      violations.push({
        kind: 'acknowledged_write_lost',
        value: attempt.value,
        token: attempt.token,
        message: `write ${attempt.value} (token ${attempt.token}) was acknowledged to ${attempt.writer} but is missing from the final state`,
      });
    }
    if (attempt.outcome === 'rejected' && present.has(attempt.value)) {
      violations.push({
        kind: 'rejected_write_present',
        value: attempt.value,
        token: attempt.token,
        message: `write ${attempt.value} (token ${attempt.token}) was reported rejected to ${attempt.writer} but is in the final state`,
      });
    }
  }
  return violations;
}
