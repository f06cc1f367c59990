// Sharing the sources among the collectors of one PostgreSQL store. Each source has its own
// ownership lease (`source:<name>` in "CollectorLease", held with lib/lease's leader
// elector): exactly one collector observes it at a time. Each collector also holds a
// membership lease (`collector:<id>`), so every one knows how many are alive, and keeps to
// its share: ceil(sources / live collectors).
//
// Every round (TTL / 5, ±20 %, or sooner when another's source lease is about to run out), a
// collector renews its membership (TTL / 2) and reads the table once:
// - below its share, it campaigns for sources nobody holds (a campaign that has not led
//   within two rounds found an owner after all, and is dropped);
// - above it (a collector joined), it gives one source up, the one it took last, so the
//   newcomer can take it: the store's history goes on with an `observation_gap` only if the
//   source changed in the moment between;
// - a killed collector's leases run out (one TTL) and its membership with them: the others'
//   share grows and they take its sources at their next round.
// A big source is split by configuring it as several sources with disjoint patterns or
// prefixes (docs/deployment.md): each part is owned on its own.
import { createLeaderElector, type Lease, type LeaseClient } from '../lease';
import type { LeaseSource } from '../sources/types';
import { systemClock } from '../time/clock';

export type Sharing = {
  client: LeaseClient;
  /** This collector's id (the holder of its leases). */
  id: string;
  ttlMs: number;
  sources: LeaseSource[];
  /** The leases of the table: name, holder, and how long until each expires (0 or less: expired). */
  readLeases(): Promise<{ name: string; owner: string | null; expiresInMs: number }[]>;
  /** Observes a source it now owns, with the ownership token, until `signal` aborts. */
  observe(source: LeaseSource, token: bigint, signal: AbortSignal): Promise<void>;
  log(line: string): void;
};

type Term = { controller: AbortController; leading: boolean; round: number; leadSince: number };

/** Runs the rounds until `stop` aborts; then gives every source and the membership up. */
export async function shareSources(sharing: Sharing, stop: AbortSignal): Promise<void> {
  const { client, id, ttlMs, sources, log } = sharing;
  const roundMs = Math.max(200, Math.floor(ttlMs / 5));
  const terms = new Map<string, Term>();
  const runs = new Set<Promise<void>>();
  let membership: Lease | null = null;
  let share = sources.length;
  const memberTtlMs = Math.max(2 * roundMs + 100, Math.floor(ttlMs / 2));
  for (let round = 0; !stop.aborted; round++) {
    let wakeMs = roundMs * (0.8 + Math.random() * 0.4);
    try {
      // Shorter than a source's lease: a dead collector no longer counts by the time its sources are free.
      membership = membership ? await client.renew(membership).catch(() => null) : await client.acquire(`collector:${id}`, { holder: id, ttlMs: memberTtlMs });
      const leases = await sharing.readLeases();
      const live = Math.max(1, leases.filter((l) => l.expiresInMs > 0 && l.name.startsWith('collector:')).length);
      const held = new Set(leases.filter((l) => l.expiresInMs > 0 && l.name.startsWith('source:')).map((l) => l.name.slice('source:'.length)));
      // The next round comes when another's source lease runs out, if sooner: a dead
      // collector's sources are taken the moment they are free.
      for (const l of leases) if (l.expiresInMs > 0 && l.name.startsWith('source:') && !terms.has(l.name.slice(7))) wakeMs = Math.min(wakeMs, l.expiresInMs + 20);
      const next = Math.ceil(sources.length / live);
      if (next !== share) log(`${live} collector${live === 1 ? '' : 's'} alive: this one's share is ${next} of ${sources.length} source${sources.length === 1 ? '' : 's'}`);
      share = next;
      // Campaigns that found another owner: dropped. (A term whose lease is still its own, its
      // leadership lost in a store outage, stays: its elector leads again as the store is back.)
      const othersHold = new Set(leases.filter((l) => l.expiresInMs > 0 && l.name.startsWith('source:') && !l.owner?.startsWith(`${id}:`)).map((l) => l.name.slice('source:'.length)));
      for (const [name, term] of terms) if (!term.leading && round - term.round >= 2 && othersHold.has(name)) term.controller.abort();
      // Above its share: the source taken last is given up, one a round.
      const leading = [...terms.entries()].filter(([, t]) => t.leading);
      if (leading.length > share) {
        const [name, term] = leading.sort((a, b) => b[1].leadSince - a[1].leadSince)[0]!;
        log(`giving ${name} up: ${leading.length} sources observed here, the share is ${share}`);
        term.controller.abort();
      }
      // Below it: sources nobody holds.
      const free = sources.filter((s) => !held.has(s.name) && !terms.has(s.name));
      for (const source of shuffled(free).slice(0, Math.max(0, share - terms.size))) {
        const term: Term = { controller: new AbortController(), leading: false, round, leadSince: 0 };
        terms.set(source.name, term);
        const run = campaign(sharing, source, term, roundMs).finally(() => {
          if (terms.get(source.name) === term) terms.delete(source.name);
          runs.delete(run);
        });
        runs.add(run);
      }
    } catch (error) {
      log(`sharing sources: ${(error as Error)?.message || String(error)}`);
    }
    await systemClock.sleep(wakeMs, stop);
  }
  for (const term of terms.values()) term.controller.abort();
  await Promise.allSettled([...runs]);
  if (membership) await client.release(membership).catch(() => false);
}

/** One term of one source: campaigns, and observes while it leads, until the term is aborted. */
function campaign(sharing: Sharing, source: LeaseSource, term: Term, roundMs: number): Promise<void> {
  const { client, id, ttlMs, log } = sharing;
  return createLeaderElector({
    client,
    key: `source:${source.name}`,
    holder: id,
    ttlMs,
    renewEveryMs: roundMs,
    onStartedLeading: async (signal, token) => {
      term.leading = true;
      term.leadSince = systemClock.mono();
      log(`observing ${source.name} (ownership token ${token})`);
      await sharing.observe(source, token, signal);
    },
    onStoppedLeading: () => {
      term.leading = false;
      log(`no longer observing ${source.name}`);
    },
    onError: (error) => log(`ownership of ${source.name}: ${(error as Error)?.message ?? error}`),
  }).run(term.controller.signal);
}

function shuffled<T>(items: T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
