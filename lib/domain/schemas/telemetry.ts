// POST /api/v1/telemetry: holder-side timings and claims, as lib/lease's reporter sends them
// (docs/api.md, POST /api/v1/telemetry). Strict: an unknown field is refused, so a typo is never silently lost.
import { z } from 'zod';

/** At most this many renewals in one request, over all its reports. */
export const TELEMETRY_MAX_RENEWALS = 1_000;
/** At most this many reports (leases × holders) in one request. */
export const TELEMETRY_MAX_REPORTS = 1_000;
/** The largest body, in bytes. */
export const TELEMETRY_MAX_BYTES = 1_000_000;
/** A claim reported without claimForMs stands this long, or until the holder's next report. */
export const DEFAULT_CLAIM_MS = 30_000;
/** A round trip or a lateness above a day is not a measurement. */
const MAX_MS = 86_400_000;

/** The longest lease id and holder the endpoint takes (lib/lease's reporter keeps to them). */
export const TELEMETRY_MAX_LEASE_CHARS = 20_000;
export const TELEMETRY_MAX_HOLDER_CHARS = 1_024;

const ms = (what: string) =>
  z.number({ error: `expected ${what} in milliseconds (a number)` }).finite().min(0, { error: `expected ${what} of 0 ms or more` }).max(MAX_MS, { error: `expected ${what} of at most a day (${MAX_MS} ms)` });

export const reportedRenewalSchema = z.strictObject({
  at: z.iso.datetime({ offset: true, error: 'expected the time the renewal was sent, as an ISO 8601 time such as 2026-12-06T03:00:01.250Z' }),
  rttMs: ms('the round trip'),
  lateMs: ms('how late it ran').nullable().optional(),
  ok: z.boolean({ error: 'expected true (renewed) or false (failed)' }),
});

export const holderReportSchema = z.strictObject({
  lease: z
    .string({ error: 'expected the lease id as Leasehold names it, "<source>/<key>"' })
    .min(3)
    .max(TELEMETRY_MAX_LEASE_CHARS),
  holder: z
    .string({ error: 'expected the holder as the backend records it' })
    .min(1, { error: 'expected a holder name' })
    .max(TELEMETRY_MAX_HOLDER_CHARS, { error: `expected a holder name of at most ${TELEMETRY_MAX_HOLDER_CHARS} characters` }),
  token: z
    .string()
    .regex(/^(0|[1-9][0-9]{0,77})$/, { error: 'expected the fencing token as a decimal string ("1182"), or null' })
    .nullable(),
  /** The lease's TTL as the holder asked for it: what late_holder measures lateness against when the backend does not say. */
  ttlMs: z
    .number({ error: 'expected the TTL in milliseconds (a number)' })
    .max(30 * MAX_MS, { error: 'expected a TTL of at most 30 days' })
    .int({ error: 'expected the TTL in whole milliseconds' })
    .min(1, { error: 'expected a TTL of 1 ms or more' })
    .nullable()
    .optional(),
  claims: z.boolean({ error: 'expected true when the holder believes it holds the lease, false otherwise' }),
  /** How much longer, from when the report was sent, the holder believes it holds the lease. */
  claimForMs: ms('how much longer the holder believes it holds the lease').nullable().optional(),
  renewals: z.array(reportedRenewalSchema).max(TELEMETRY_MAX_RENEWALS),
});

export const telemetryBodySchema = z
  .strictObject({
    reports: z
      .array(holderReportSchema, { error: 'expected "reports": a list of { lease, holder, token, claims, renewals }' })
      .min(1, { error: 'expected at least one report' })
      .max(TELEMETRY_MAX_REPORTS, { error: `expected at most ${TELEMETRY_MAX_REPORTS} reports in one request` }),
  })
  .superRefine((body, ctx) => {
    const renewals = body.reports.reduce((sum, report) => sum + report.renewals.length, 0);
    if (renewals > TELEMETRY_MAX_RENEWALS) {
      ctx.addIssue({ code: 'custom', path: ['reports'], message: `expected at most ${TELEMETRY_MAX_RENEWALS} renewals in one request, found ${renewals}: send them in several` });
    }
  });

export type TelemetryBody = z.output<typeof telemetryBodySchema>;
export type HolderReport = TelemetryBody['reports'][number];

/** The answer: what was stored. */
export const telemetryAcceptedSchema = z.object({
  accepted: z.object({ reports: z.number().int(), renewals: z.number().int() }),
});
