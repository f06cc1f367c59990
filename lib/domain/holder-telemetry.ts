// Holder-reported renewals rolled up per lease, holder and minute (pure: lib/db/telemetry.ts
// stores what this makes). A minute's figures add up across requests: count, failures, the
// sums and maxima of round trip and lateness.
import { DEFAULT_CLAIM_MS, type HolderReport } from './schemas/telemetry';

/** A telemetry request refused whole (422): a lease not observed here, a time outside the window. */
export class TelemetryRefusedError extends Error {
  constructor(
    readonly code: 'unknown_lease' | 'invalid_time',
    message: string,
  ) {
    super(message);
    this.name = 'TelemetryRefusedError';
  }
}

/** A value quoted for a message: cut at 60 characters, control characters escaped. */
const quote = (value: string) => JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);

/** A report names a lease this Leasehold does not observe. */
export function unknownLease(index: number, leaseId: string, more: number): TelemetryRefusedError {
  const others = more > 0 ? ` (and ${more} other unknown lease${more === 1 ? '' : 's'})` : '';
  return new TelemetryRefusedError(
    'unknown_lease',
    `reports[${index}].lease: no lease ${quote(leaseId)} is observed by this Leasehold${others}; name leases as the console does, "<source>/<key>". Nothing of this request was stored.`,
  );
}

export type HolderMinute = {
  leaseId: string;
  holder: string;
  minute: Date;
  count: number;
  failed: number;
  rttSumMs: number;
  rttMaxMs: number;
  lateCount: number;
  lateSumMs: number;
  lateMaxMs: number;
};

/** How far from the server's clock a renewal's time may be: older is history, later is a clock that is wrong. */
export const REPORTED_AT_WINDOW = { pastMs: 24 * 3_600_000, futureMs: 5 * 60_000 } as const;

/** The first renewal whose time is outside the window, named as "reports[i].renewals[j].at", or null. */
export function renewalOutsideWindow(reports: readonly HolderReport[], now: number): string | null {
  for (const [i, report] of reports.entries()) {
    for (const [j, renewal] of report.renewals.entries()) {
      const at = Date.parse(renewal.at);
      if (at < now - REPORTED_AT_WINDOW.pastMs) return `reports[${i}].renewals[${j}].at (${renewal.at}) is more than a day old`;
      if (at > now + REPORTED_AT_WINDOW.futureMs) return `reports[${i}].renewals[${j}].at (${renewal.at}) is more than 5 minutes ahead of this server's clock (${new Date(now).toISOString()}): check the holder's clock`;
    }
  }
  return null;
}

const MINUTE_MS = 60_000;

/** The reports' renewals, one row per lease, holder and minute. */
export function holderMinutes(reports: readonly HolderReport[]): HolderMinute[] {
  const rows = new Map<string, HolderMinute>();
  for (const report of reports) {
    for (const renewal of report.renewals) {
      const minuteMs = Math.floor(Date.parse(renewal.at) / MINUTE_MS) * MINUTE_MS;
      const id = `${report.lease}\u0000${report.holder}\u0000${minuteMs}`;
      let row = rows.get(id);
      if (!row) {
        row = { leaseId: report.lease, holder: report.holder, minute: new Date(minuteMs), count: 0, failed: 0, rttSumMs: 0, rttMaxMs: 0, lateCount: 0, lateSumMs: 0, lateMaxMs: 0 };
        rows.set(id, row);
      }
      row.count += 1;
      if (!renewal.ok) row.failed += 1;
      row.rttSumMs += renewal.rttMs;
      row.rttMaxMs = Math.max(row.rttMaxMs, renewal.rttMs);
      if (renewal.lateMs !== null && renewal.lateMs !== undefined) {
        row.lateCount += 1;
        row.lateSumMs += renewal.lateMs;
        row.lateMaxMs = Math.max(row.lateMaxMs, renewal.lateMs);
      }
    }
  }
  return [...rows.values()];
}

export type ClaimRow = {
  leaseId: string;
  holder: string;
  claims: boolean;
  token: string | null;
  /** The TTL the holder asked for, when it said. */
  ttlMs: number | null;
  /** Until when the claim stands: the holder's claimForMs from `now`, else DEFAULT_CLAIM_MS; null when it does not claim. */
  claimUntil: Date | null;
  /** The largest lateness of the (lease, holder)'s renewals in the request, if any said. */
  lateMaxMs: number | null;
};

/** Each (lease, holder)'s last word in one request (the last report for it wins), with the lateness of all its renewals there. */
export function lastClaims(reports: readonly HolderReport[], now: number): ClaimRow[] {
  const last = new Map<string, ClaimRow>();
  for (const report of reports) {
    const id = `${report.lease}\u0000${report.holder}`;
    let lateMaxMs = last.get(id)?.lateMaxMs ?? null;
    for (const renewal of report.renewals) if (renewal.lateMs !== null && renewal.lateMs !== undefined) lateMaxMs = Math.max(lateMaxMs ?? 0, renewal.lateMs);
    const claimUntil = report.claims ? new Date(now + (report.claimForMs ?? DEFAULT_CLAIM_MS)) : null;
    last.set(id, { leaseId: report.lease, holder: report.holder, claims: report.claims, token: report.token, ttlMs: report.ttlMs ?? last.get(id)?.ttlMs ?? null, claimUntil, lateMaxMs });
  }
  return [...last.values()];
}
