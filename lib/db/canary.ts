// Canary round trips in the store (CanaryRollup): what each source's canary lease cost per call
// and minute, written by the collector that owns the source (lib/collector/canary.ts) and read
// by whichever process serves the sources page. Rows are added to, never replaced, so a
// collector that takes a source over mid-minute adds its calls to its predecessor's.
import type { CanaryCall, RoundTripRollup } from '../domain/canary-stats';
import type { Store } from './store';

/** How long rollups are kept: the sources page shows at most a day. */
export const CANARY_KEEP_MS = 2 * 86_400_000;

export type CanaryMinute = RoundTripRollup & { source: string; call: CanaryCall; minute: Date };

/** Adds each minute's calls to what the store has of that source, call and minute. */
export async function addCanaryMinutes(store: Store, minutes: readonly CanaryMinute[]): Promise<void> {
  if (minutes.length === 0) return;
  const rows = minutes.map((m) => ({ source: m.source, call: m.call, minute: m.minute.toISOString(), count: m.count, failed: m.failed, sumMs: m.sumMs, maxMs: m.maxMs, buckets: m.buckets }));
  await store.transaction((sql) =>
    sql.query(
      `INSERT INTO "CanaryRollup" (source, call, minute, count, failed, "sumMs", "maxMs", buckets)
       SELECT x.source, x.call, x.minute::timestamptz, x.count, x.failed, x."sumMs", x."maxMs", x.buckets
         FROM jsonb_to_recordset($1::jsonb) AS x(source text, call text, minute text, count int, failed int, "sumMs" float8, "maxMs" float8, buckets jsonb)
       ON CONFLICT (source, call, minute) DO UPDATE SET
         count = "CanaryRollup".count + EXCLUDED.count,
         failed = "CanaryRollup".failed + EXCLUDED.failed,
         "sumMs" = "CanaryRollup"."sumMs" + EXCLUDED."sumMs",
         "maxMs" = GREATEST("CanaryRollup"."maxMs", EXCLUDED."maxMs"),
         buckets = (SELECT COALESCE(jsonb_object_agg(k, n), '{}'::jsonb)
                      FROM (SELECT k, SUM(v::int) AS n
                              FROM (SELECT * FROM jsonb_each_text("CanaryRollup".buckets) UNION ALL SELECT * FROM jsonb_each_text(EXCLUDED.buckets)) AS b(k, v)
                             GROUP BY k) AS summed)`,
      [JSON.stringify(rows)],
    ),
  );
}

/** Drops rollups older than CANARY_KEEP_MS (of every source: one collector's sweep serves all). */
export async function pruneCanaryMinutes(store: Store, now: Date): Promise<number> {
  const { count } = await store.prisma.canaryRollup.deleteMany({ where: { minute: { lt: new Date(now.getTime() - CANARY_KEEP_MS) } } });
  return count;
}

/** The rollups of `sources` since `since`, oldest first. */
export async function readCanaryMinutes(store: Store, sources: readonly string[], since: Date): Promise<CanaryMinute[]> {
  if (sources.length === 0) return [];
  const rows = await store.prisma.canaryRollup.findMany({ where: { source: { in: [...sources] }, minute: { gte: since } }, orderBy: { minute: 'asc' } });
  return rows.map((row) => ({
    source: row.source,
    call: row.call as CanaryCall,
    minute: row.minute,
    count: row.count,
    failed: row.failed,
    sumMs: row.sumMs,
    maxMs: row.maxMs,
    buckets: row.buckets !== null && typeof row.buckets === 'object' && !Array.isArray(row.buckets) ? (row.buckets as Record<string, number>) : {},
  }));
}
