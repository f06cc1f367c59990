// The body of GET /api/v1/leases: the lease list (served from memory, lib/queries/lease-cache.ts)
// and every source's status, assembled as UTF-8 JSON around the list's bytes, not re-serialized.
import 'server-only';
import type { Root } from '../root';
import { InvalidParameterError } from '../api/params';
import { listSources, type SourceRow } from './console';
import { leaseListJson, type LeaseCacheRoot } from './lease-cache';
import type { LeasePageFilter } from './lease-page';
import { systemClock } from '../time/clock';

export type LeaseListReply = {
  body: Buffer<ArrayBuffer>;
  /** Milliseconds from `started` until the list was ready; then until the sources were. */
  listMs: number;
  sourcesMs: number;
};

/**
 * `{ leases, total, truncated, next, counts, position, sources }` for `filter`, from `root`'s store and cache. `started`: when the request
 * began (performance.now()), which the timings count from. A `source` that no source has
 * (configured, or still in the store) is a 400 naming the sources there are.
 */
export async function leaseListReply(root: LeaseCacheRoot & Pick<Root, 'config' | 'store'>, filter: LeasePageFilter, started = systemClock.mono()): Promise<LeaseListReply> {
  const store = await root.store();
  const list = await leaseListJson(root, store, filter);
  const listMs = systemClock.mono() - started;
  // Lease counts per source from the same list, not a COUNT over the table; the source rows
  // at most a second old (their last good read moves on with every poll).
  const sources = await listSources(store, root.config, list.counts, { root, maxAgeMs: 1_000 });
  const unknown = unknownSource(filter.source, sources);
  if (unknown) throw unknown;
  const sourcesMs = systemClock.mono() - started - listMs;
  return { body: leaseListBody(list, sources), listMs, sourcesMs };
}

/** A source nobody configured or observed is a mistake to say, not an empty list to show: the 400 for it, or null. */
export function unknownSource(name: string | undefined, sources: readonly Pick<SourceRow, 'name'>[]): InvalidParameterError | null {
  if (name === undefined || sources.some((source) => source.name === name)) return null;
  const names = sources.map((source) => source.name);
  return new InvalidParameterError('source', names.length ? `the name of a source (${names.slice(0, 20).join(', ')}${names.length > 20 ? ', …' : ''})` : 'the name of a source, and none is configured', name);
}

/** The reply's bytes: the list's JSON as it is, the rest around it. */
export function leaseListBody(
  list: { json: Buffer; total: number; truncated: boolean; next: string | null; counts: ReadonlyMap<string, number>; states: object; position: string },
  sources: readonly unknown[],
): Buffer<ArrayBuffer> {
  const counts = { sources: Object.fromEntries(list.counts), states: list.states };
  const rest = `,"total":${list.total},"truncated":${list.truncated},"next":${JSON.stringify(list.next)},"counts":${JSON.stringify(counts)},"position":"${list.position}","sources":${JSON.stringify(sources)}}`;
  return Buffer.concat([Buffer.from('{"leases":'), list.json, Buffer.from(rest)]);
}
