// Reads of the Source table (the collector writes it: observer-writes.ts). lib/db owns the
// store's lease tables: everything else reads them through here.
import type { Store } from './store';

export type SourceRecord = Awaited<ReturnType<Store['prisma']['source']['findMany']>>[number];

/** Every source the store has a row of, by name. */
export const readSources = (store: Store): Promise<SourceRecord[]> => store.prisma.source.findMany({ orderBy: { name: 'asc' } });

export const readSource = (store: Store, name: string): Promise<SourceRecord | null> => store.prisma.source.findUnique({ where: { name } });

/** Each source's last good read: what a lease's "observed at" is when the source read it since (lib/domain/lease-view.ts toLeaseView). */
export async function sourceReadTimes(store: Store): Promise<Map<string, Date | null>> {
  const rows = await store.prisma.source.findMany({ select: { name: true, lastGoodReadAt: true } });
  return new Map(rows.map((s) => [s.name, s.lastGoodReadAt]));
}

/** When a source last went down (its latest source_down event), or null. */
export async function lastDownAt(store: Store, name: string): Promise<Date | null> {
  const event = await store.prisma.sourceEvent.findFirst({ where: { sourceName: name, type: 'source_down' }, orderBy: { seq: 'desc' }, select: { at: true } });
  return event?.at ?? null;
}
