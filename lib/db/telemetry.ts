// Holder-side telemetry in the store: POST /api/v1/telemetry's reports, rolled up per lease,
// holder and minute (HolderRollup), and each holder's last claim on a lease (HolderClaim).
// A request is stored whole or not at all: every lease it names must be one this Leasehold
// observes, checked before anything is written, and the writes share one transaction.
import { holderMinutes, lastClaims, renewalOutsideWindow, TelemetryRefusedError, unknownLease } from '../domain/holder-telemetry';
import type { TelemetryBody } from '../domain/schemas/telemetry';
import type { Store } from './store';

export async function storeTelemetry(store: Store, body: TelemetryBody, now: Date): Promise<{ reports: number; renewals: number }> {
  const outside = renewalOutsideWindow(body.reports, now.getTime());
  if (outside) throw new TelemetryRefusedError('invalid_time', `${outside}. Nothing of this request was stored.`);

  const ids = [...new Set(body.reports.map((report) => report.lease))];
  const known = new Set(
    (await store.prisma.lease.findMany({ where: { id: { in: ids } }, select: { id: true } })).map((lease) => lease.id),
  );
  const unknown = body.reports.map((report, index) => ({ index, lease: report.lease })).filter((report) => !known.has(report.lease));
  if (unknown.length > 0) {
    const distinct = new Set(unknown.map((report) => report.lease)).size;
    throw unknownLease(unknown[0]!.index, unknown[0]!.lease, distinct - 1);
  }

  const minutes = holderMinutes(body.reports);
  const claims = lastClaims(body.reports, now.getTime()).map((row) => ({ ...row, claimUntil: row.claimUntil?.toISOString() ?? null }));
  const at = now.toISOString();
  try {
    await store.transaction(async (sql) => {
      if (minutes.length > 0) {
        await sql.query(
          `INSERT INTO "HolderRollup" ("leaseId", holder, minute, count, failed, "rttSumMs", "rttMaxMs", "lateCount", "lateSumMs", "lateMaxMs")
           SELECT x."leaseId", x.holder, x.minute::timestamptz, x.count, x.failed, x."rttSumMs", x."rttMaxMs", x."lateCount", x."lateSumMs", x."lateMaxMs"
             FROM jsonb_to_recordset($1::jsonb) AS x("leaseId" text, holder text, minute text, count int, failed int, "rttSumMs" float8, "rttMaxMs" float8,
                                                      "lateCount" int, "lateSumMs" float8, "lateMaxMs" float8)
           ON CONFLICT ("leaseId", holder, minute) DO UPDATE SET
             count = "HolderRollup".count + EXCLUDED.count,
             failed = "HolderRollup".failed + EXCLUDED.failed,
             "rttSumMs" = "HolderRollup"."rttSumMs" + EXCLUDED."rttSumMs",
             "rttMaxMs" = GREATEST("HolderRollup"."rttMaxMs", EXCLUDED."rttMaxMs"),
             "lateCount" = "HolderRollup"."lateCount" + EXCLUDED."lateCount",
             "lateSumMs" = "HolderRollup"."lateSumMs" + EXCLUDED."lateSumMs",
             "lateMaxMs" = GREATEST("HolderRollup"."lateMaxMs", EXCLUDED."lateMaxMs")`,
          [JSON.stringify(minutes.map((m) => ({ ...m, minute: m.minute.toISOString() })))],
        );
      }
      // The claim: since when a holder has claimed without a break survives reports that
      // go on claiming with the same token, and ends with the first that does not.
      await sql.query(
        `INSERT INTO "HolderClaim" ("leaseId", holder, claims, token, "claimsSince", "claimUntil", "ttlMs", "lateMaxMs", "lateReportedAt", "reportedAt")
         SELECT x."leaseId", x.holder, x.claims, x.token::numeric, CASE WHEN x.claims THEN $2::timestamptz END, x."claimUntil"::timestamptz, x."ttlMs",
                x."lateMaxMs", CASE WHEN x."lateMaxMs" IS NOT NULL THEN $2::timestamptz END, $2::timestamptz
           FROM jsonb_to_recordset($1::jsonb) AS x("leaseId" text, holder text, claims boolean, token text, "claimUntil" text, "ttlMs" float8, "lateMaxMs" float8)
         ON CONFLICT ("leaseId", holder) DO UPDATE SET
           claims = EXCLUDED.claims,
           token = EXCLUDED.token,
           "claimUntil" = EXCLUDED."claimUntil",
           "ttlMs" = COALESCE(EXCLUDED."ttlMs", "HolderClaim"."ttlMs"),
           -- A report without lateness (no renewals) leaves the last that had some.
           "lateMaxMs" = COALESCE(EXCLUDED."lateMaxMs", "HolderClaim"."lateMaxMs"),
           "lateReportedAt" = COALESCE(EXCLUDED."lateReportedAt", "HolderClaim"."lateReportedAt"),
           "claimsSince" = CASE
             WHEN NOT EXCLUDED.claims THEN NULL
             -- A claim on another grant (another token) is a new claim.
             WHEN "HolderClaim".token IS NOT DISTINCT FROM EXCLUDED.token THEN COALESCE("HolderClaim"."claimsSince", EXCLUDED."claimsSince")
             ELSE EXCLUDED."claimsSince"
           END,
           "reportedAt" = EXCLUDED."reportedAt"`,
        [JSON.stringify(claims), at],
      );
    });
  } catch (error) {
    // The lease was forgotten (its source removed) between the check and the write.
    if ((error as { code?: string }).code === '23503') {
      throw new TelemetryRefusedError('unknown_lease', 'A lease in this request stopped being observed while it was stored. Nothing of this request was stored.');
    }
    throw error;
  }
  return { reports: body.reports.length, renewals: minutes.reduce((sum, m) => sum + m.count, 0) };
}

export type HolderReportView = {
  holder: string;
  claims: boolean;
  token: string | null;
  claimsSince: string | null;
  reportedAt: string;
  minutes: { minute: string; count: number; failed: number; rttAvgMs: number; rttMaxMs: number; lateAvgMs: number | null; lateMaxMs: number | null }[];
};

/** What holders reported of one lease since `since`: each holder's last claim and its per-minute timings, oldest first. */
export async function readHolderReports(store: Store, leaseId: string, since: Date): Promise<HolderReportView[]> {
  const claims = await store.prisma.holderClaim.findMany({ where: { leaseId }, orderBy: { reportedAt: 'desc' }, take: 50 });
  // The newest minutes of those holders, at most 5,000 (a week of one holder's is 10,080).
  const rollups = (
    await store.prisma.holderRollup.findMany({
      where: { leaseId, holder: { in: claims.map((claim) => claim.holder) }, minute: { gte: since } },
      orderBy: { minute: 'desc' },
      take: 5_000,
    })
  ).reverse();
  const round = (value: number) => Math.round(value * 10) / 10;
  const views = new Map<string, HolderReportView>();
  for (const claim of claims) {
    views.set(claim.holder, {
      holder: claim.holder,
      claims: claim.claims,
      token: claim.token === null ? null : claim.token.toFixed(0),
      claimsSince: claim.claimsSince?.toISOString() ?? null,
      reportedAt: claim.reportedAt.toISOString(),
      minutes: [],
    });
  }
  for (const row of rollups) {
    views.get(row.holder)?.minutes.push({
      minute: row.minute.toISOString(),
      count: row.count,
      failed: row.failed,
      rttAvgMs: row.count > 0 ? round(row.rttSumMs / row.count) : 0,
      rttMaxMs: round(row.rttMaxMs),
      lateAvgMs: row.lateCount > 0 ? round(row.lateSumMs / row.lateCount) : null,
      lateMaxMs: row.lateCount > 0 ? round(row.lateMaxMs) : null,
    });
  }
  return [...views.values()];
}

export type ClaimReport = { leaseId: string; holder: string; claims: boolean; token: string | null; claimsSince: Date | null; claimUntil: Date | null; ttlMs: number | null; lateMaxMs: number | null; lateReportedAt: Date | null; reportedAt: Date };

/** Holders' last claims reported after `after`, oldest first, at most `limit` (the alert engine's feed, lib/alerts/claims-feed.ts). */
export async function claimsReportedAfter(store: Store, after: Date, limit: number): Promise<ClaimReport[]> {
  const rows = await store.prisma.holderClaim.findMany({ where: { reportedAt: { gt: after } }, orderBy: { reportedAt: 'asc' }, take: limit });
  return rows.map((row) => ({
    leaseId: row.leaseId,
    holder: row.holder,
    claims: row.claims,
    token: row.token === null ? null : row.token.toFixed(0),
    claimsSince: row.claimsSince,
    claimUntil: row.claimUntil,
    ttlMs: row.ttlMs,
    lateMaxMs: row.lateMaxMs,
    lateReportedAt: row.lateReportedAt,
    reportedAt: row.reportedAt,
  }));
}

export type HolderFigures = { leaseId: string; holder: string; claims: boolean; renewals: number; failed: number; rttMaxMs: number | null; lateMaxMs: number | null };

/**
 * What holders reported of these leases since `since` (GET /metrics): per lease and holder,
 * whether it claims the lease now, its renewals and failures, its slowest round trip and its
 * largest lateness (null when none said); at most `limit` rows, in the leases' order.
 */
export async function recentHolderFigures(store: Store, leaseIds: readonly string[], since: Date, now: Date, limit: number): Promise<HolderFigures[]> {
  if (leaseIds.length === 0 || limit <= 0) return [];
  const where = { leaseId: { in: [...leaseIds] } };
  const [claims, minutes] = await Promise.all([
    store.prisma.holderClaim.findMany({ where: { ...where, reportedAt: { gte: since } }, select: { leaseId: true, holder: true, claims: true, claimUntil: true } }),
    store.prisma.holderRollup.groupBy({
      by: ['leaseId', 'holder'],
      where: { ...where, minute: { gte: since } },
      _sum: { count: true, failed: true, lateCount: true },
      _max: { rttMaxMs: true, lateMaxMs: true },
    }),
  ]);
  const figures = new Map<string, HolderFigures>();
  const entry = (leaseId: string, holder: string) => {
    const id = `${leaseId}\u0000${holder}`;
    let figure = figures.get(id);
    if (!figure) figures.set(id, (figure = { leaseId, holder, claims: false, renewals: 0, failed: 0, rttMaxMs: null, lateMaxMs: null }));
    return figure;
  };
  for (const claim of claims) entry(claim.leaseId, claim.holder).claims = claim.claims && claim.claimUntil !== null && claim.claimUntil > now;
  for (const row of minutes) {
    const figure = entry(row.leaseId, row.holder);
    figure.renewals = row._sum.count ?? 0;
    figure.failed = row._sum.failed ?? 0;
    figure.rttMaxMs = figure.renewals > 0 ? row._max.rttMaxMs : null;
    figure.lateMaxMs = (row._sum.lateCount ?? 0) > 0 ? row._max.lateMaxMs : null;
  }
  const order = new Map(leaseIds.map((id, index) => [id, index]));
  return [...figures.values()].sort((a, b) => order.get(a.leaseId)! - order.get(b.leaseId)! || (a.holder < b.holder ? -1 : a.holder > b.holder ? 1 : 0)).slice(0, limit);
}
