// Every grant a load was given, looked for in what the collector stored: as an acquisition
// some read saw held, or inside an `unseen_grants` event's range of tokens (grants that came
// and went between two reads). Shared by the churn test and bench/churn-bench.ts.

/** A stored event of one lease, as the store returns it (tokens as decimals or strings). */
export type StoredGrantEvent = { key: string; type: string; token: { toString(): string } | null; previousToken: { toString(): string } | null; detail: unknown };

export type GrantAccount = { granted: number; accounted: number; lost: number; twice: number; seenHeld: number; unseen: number; lostExamples: string[] };

/** Compares the tokens granted per key with the grants the events account for. */
export function accountGrants(granted: Record<string, string[]>, events: StoredGrantEvent[]): GrantAccount {
  const found = new Map<string, Map<string, number>>();
  const note = (key: string, token: bigint) => {
    const tokens = found.get(key) ?? new Map<string, number>();
    tokens.set(token.toString(), (tokens.get(token.toString()) ?? 0) + 1);
    found.set(key, tokens);
  };
  let seenHeld = 0;
  let unseen = 0;
  for (const event of events) {
    if (event.token === null) continue;
    const token = BigInt(event.token.toString());
    if (event.type === 'unseen_grants' && event.previousToken !== null) {
      for (let t = BigInt(event.previousToken.toString()) + 1n; t <= token; t++, unseen++) note(event.key, t);
    } else if ((event.type === 'acquired' || event.type === 'taken_over') && (event.detail as { firstSeen?: boolean } | null)?.firstSeen !== true) {
      seenHeld++;
      note(event.key, token);
    }
  }
  const account: GrantAccount = { granted: 0, accounted: 0, lost: 0, twice: 0, seenHeld, unseen, lostExamples: [] };
  for (const [key, tokens] of Object.entries(granted)) {
    for (const token of tokens) {
      account.granted++;
      const n = found.get(key)?.get(token) ?? 0;
      if (n === 0) {
        account.lost++;
        if (account.lostExamples.length < 5) account.lostExamples.push(`${key} token ${token}`);
      } else account.accounted++;
      if (n > 1) account.twice++;
    }
  }
  return account;
}
