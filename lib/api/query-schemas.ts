// The query of every API route, as one zod schema per route, built from one schema per
// parameter. Every parameter is taken at most once, at most MAX_PARAMETER_CHARS long (or its
// own rule's length), without control characters; absent or empty is "not given". Each value
// is then checked for what the store can hold (PostgreSQL's bigint and timestamptz, text
// without NUL) as well as for what the API means by it. Parameters a route does not name are
// ignored. An issue's message is what the parameter "must be" (lib/api/params.ts parseQuery
// turns the first issue into the 400 that names the parameter, from the issue's path, and
// quotes the value, from the issue's input).
import { z } from 'zod';
import { CONTROL_CHARACTER } from '../domain/unprintable';
import { ALERT_RULE_TYPES } from '../domain/alert-types';
import { AUDIT_PHASES } from '../domain/audit';
import { EVENT_TYPES, LEASE_KINDS, LEASE_STATES } from '../domain/types';
import { FAILOVER_CAUSES, FAILOVER_CHANGES } from '../domain/failover-stats';
import { systemClock } from '../time/clock';
import { SORTS } from '../domain/overview';
import { decodeCursor, MAX_CURSOR_CHARS } from './lease-cursor';

/** C0 controls, DEL and C1 controls (lib/domain/unprintable.ts): never in a parameter, never in a stored key (those are escaped as \xNN or \uNNNN). */
export const CONTROL = CONTROL_CHARACTER;
/** Any query parameter is at most this long, unless its own rule says less. */
export const MAX_PARAMETER_CHARS = 1_000;

/** A query as the schemas read it: every value of each parameter, in order. */
export type QueryValues = Record<string, string[]>;

export function queryValues(params: URLSearchParams): QueryValues {
  const values = new Map<string, string[]>(); // a Map: a parameter may be named __proto__
  for (const [name, value] of params) {
    const all = values.get(name);
    if (all) all.push(value);
    else values.set(name, [value]);
  }
  return Object.fromEntries(values);
}

/**
 * One query parameter: its one value checked by `value`, or undefined when it is absent or
 * empty. Given more than once, longer than `maxChars` or holding a control character: an issue.
 */
export function param<T extends z.ZodType<unknown, string>>(value: T, maxChars = MAX_PARAMETER_CHARS) {
  return z
    .array(z.string())
    .optional()
    .transform((all, ctx) => {
      if (all === undefined || all.length === 0) return undefined;
      // Inputs that are not the value (a list, a length) are not quoted by the message.
      if (all.length > 1) return refuse(ctx, `given once, not ${all.length} times`);
      const raw = all[0]!;
      if (raw === '') return undefined;
      if (raw.length > maxChars) return refuse(ctx, `at most ${maxChars} characters long, not ${raw.length}`);
      if (CONTROL.test(raw)) return refuse(ctx, 'text without control characters', raw);
      return raw;
    })
    .pipe(value.optional());
}

function refuse(ctx: z.core.ParsePayload, expected: string, input?: string): typeof z.NEVER {
  ctx.issues.push({ code: 'custom', message: expected, input });
  return z.NEVER;
}

/** An enum's issue says what it must be from the enum's own values. */
const oneOf =
  (prefix: string) =>
  (issue: { values?: readonly unknown[] }): string =>
    `${prefix} ${(issue.values ?? []).join(', ')}`;

// ---------------------------------------------------------------------------- times

const DURATION = /^(\d{1,6})(s|m|h|d)$/;
const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(Z|[+-]\d{2}(?::?\d{2})?)?$/i;
/** The times both PostgreSQL's timestamptz and a JS Date hold, written with a four-digit year. */
export const MIN_TIME_MS = Date.parse('0001-01-01T00:00:00.000Z');
export const MAX_TIME_MS = Date.parse('9999-12-31T23:59:59.999Z');
const SINCE_EXPECTED = 'an ISO time (2026-12-02T06:00:00Z) from year 1 to 9999, or a duration such as 15m, 6h or 7d (1-6 digits)';

/**
 * An ISO 8601 time, checked field by field (a JS Date turns February 30 into March 2):
 * milliseconds since 1970, or null when it is not a real time from year 1 to 9999. A time
 * without an offset is UTC, whatever the server's time zone.
 */
export function parseIsoTime(raw: string): number | null {
  const m = ISO_TIME.exec(raw);
  if (!m) return null;
  const [year, month, day, hour = 0, minute = 0, second = 0] = m.slice(1, 7).map((part) => (part === undefined ? undefined : Number(part))) as number[];
  const ms = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, '0'));
  if (month! < 1 || month! > 12 || day! < 1 || day! > daysInMonth(year!, month!)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  let offsetMinutes = 0;
  const zone = m[8];
  if (zone !== undefined && zone.toUpperCase() !== 'Z') {
    const digits = zone.slice(1).replace(':', '');
    const hours = Number(digits.slice(0, 2));
    const minutes = digits.length > 2 ? Number(digits.slice(2)) : 0;
    if (hours > 23 || minutes > 59) return null;
    offsetMinutes = (zone[0] === '-' ? -1 : 1) * (hours * 60 + minutes);
  }
  const date = new Date(0);
  date.setUTCFullYear(year!, month! - 1, day!); // setUTCFullYear, not Date.UTC: years 0-99 are not 1900-1999
  date.setUTCHours(hour, minute, second, ms);
  const at = date.getTime() - offsetMinutes * 60_000;
  return at >= MIN_TIME_MS && at <= MAX_TIME_MS ? at : null;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** `since`: an ISO timestamp, or a duration back from `now` (30s, 15m, 6h, 7d); `now` is read at parse time unless given. */
export function sinceParam(now?: number) {
  const since = z.string().transform((raw, ctx) => {
    const duration = DURATION.exec(raw);
    if (duration) {
      const at = (now ?? systemClock.wall()) - Number(duration[1]) * UNIT_MS[duration[2] as keyof typeof UNIT_MS];
      if (at < MIN_TIME_MS) return refuse(ctx, 'a duration that reaches back no further than year 1', raw);
      return new Date(at);
    }
    const at = parseIsoTime(raw);
    if (at === null) return refuse(ctx, SINCE_EXPECTED, raw);
    return new Date(at);
  });
  return param(since, 64);
}

// ---------------------------------------------------------------------------- numbers

/** `limit`: a whole number from 1 to `max` in decimal digits (not 1e3, not 1.0); `fallback` when not given. */
export function limitParam(fallback: number, max: number) {
  const expected = `a whole number from 1 to ${max}`;
  const limit = z
    .string()
    .regex(/^\d{1,15}$/, { error: expected, abort: true })
    .refine((raw) => Number(raw) >= 1 && Number(raw) <= max, { error: expected })
    .transform(Number);
  return param(limit, 32).transform((value) => value ?? fallback);
}

/** The largest value of PostgreSQL's bigint, which event ids (and so cursors) are. */
export const MAX_INT64 = 9_223_372_036_854_775_807n;
const CURSOR_EXPECTED = 'the "next" value of a previous page (a whole number of at most 19 digits, below 2^63)';

/** `cursor`: an opaque cursor from a previous page (`next`). */
export const cursorParam = param(
  z
    .string()
    .regex(/^\d{1,19}$/, { error: CURSOR_EXPECTED, abort: true })
    .refine((raw) => BigInt(raw) <= MAX_INT64, { error: CURSOR_EXPECTED })
    .transform((raw) => BigInt(raw)),
  32,
);

// ---------------------------------------------------------------------------- names

/** `types`: comma-separated event types; the message quotes the first that is none. */
export const typesParam = param(
  z
    .string()
    .transform((raw) => raw.split(',').map((type) => type.trim()))
    .pipe(z.array(z.enum(EVENT_TYPES, { error: oneOf('a comma-separated list of') }))),
  500,
);

export const stateParam = param(z.enum(LEASE_STATES, { error: oneOf('one of') }), 32);

/** `source`: the shape of a source name (whether there is such a source is the route's to say). */
export const sourceParam = param(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, { error: 'a source name' }), 64);

/** `q`: part of a key, holder or lease id, as the lists filter on it. */
export const searchTextParam = param(z.string(), 200);

export const causeParam = param(z.enum(FAILOVER_CAUSES, { error: oneOf('one of') }), 32);
export const changeParam = param(z.enum(FAILOVER_CHANGES, { error: oneOf('one of') }), 32);
export const kindParam = param(z.enum(LEASE_KINDS, { error: oneOf('one of') }), 32);

/** `actor`: a user's or a token's name, as the audit log records it (matched exactly). */
export const actorParam = param(z.string(), 200);
/** `lease`: a lease id, matched exactly (whether there is such a lease does not matter to the audit log). */
export const leaseIdParam = param(z.string());
/** `action`: an admin action's name, such as force-expire. */
export const actionParam = param(z.string().regex(/^[a-z][a-z0-9_.:-]{0,63}$/, { error: 'an action name (lower-case letters, digits and . _ : -)' }), 64);
export const phaseParam = param(z.enum(AUDIT_PHASES, { error: oneOf('one of') }), 32);

// ---------------------------------------------------------------------------- routes
// The keys are in the order the parameters are checked: the first issue is the one answered.

/** GET /api/v1/leases */
/** `state` of the lease list: a lease state, or `stale` (its source cannot be read) or `problems` (lib/domain/health.ts). */
export const LEASE_LIST_STATES = [...LEASE_STATES, 'stale', 'problems'] as const;

const LEASE_CURSOR_EXPECTED = 'the "next" value of an earlier page of this list';

/** GET /api/v1/leases: a page of the list, filtered and sorted by the server (docs/api.md, "Paging"). */
export const leasesQuery = z
  .object({
    state: param(z.enum(LEASE_LIST_STATES, { error: oneOf('one of') }), 32),
    q: searchTextParam,
    source: sourceParam,
    sort: param(z.enum(SORTS, { error: oneOf('one of') }), 32),
    cursor: param(
      z.string().transform((raw, ctx) => decodeCursor(raw) ?? refuse(ctx, LEASE_CURSOR_EXPECTED, raw)),
      MAX_CURSOR_CHARS,
    ),
    limit: limitParam(10_000, 100_000),
  })
  .superRefine(({ sort, cursor }, ctx) => {
    // A cursor from a list in another order would start the page at a meaningless place.
    const cursorSort = cursor === undefined ? undefined : cursor.kind === 'after' ? 'key' : cursor.sort;
    if (cursorSort !== undefined && cursorSort !== (sort ?? 'key'))
      ctx.issues.push({ code: 'custom', path: ['cursor'], message: `${LEASE_CURSOR_EXPECTED} sorted the same way (this cursor is for sort=${cursorSort})`, input: undefined });
  });

/** GET /api/v1/leases/{id}/events */
export const leaseEventsQuery = z
  .object({ since: sinceParam(), types: typesParam, cursor: cursorParam, limit: limitParam(100, 1_000) })
  .transform(({ since, types, cursor, limit }) => ({ since, types, before: cursor, limit }));

/** GET /api/v1/leases/{id}/renewals */
export const leaseRenewalsQuery = z.object({ since: sinceParam() });

/** GET /api/v1/failovers */
export const failoversQuery = z
  .object({ since: sinceParam(), limit: limitParam(200, 5_000), cursor: cursorParam })
  .transform(({ since, limit, cursor }) => ({ since, limit, before: cursor }));

/** GET /api/v1/failovers.csv: the failovers page's filters, and at most `limit` rows. */
export const failoversCsvQuery = z
  .object({ since: sinceParam(), limit: limitParam(100_000, 100_000), cause: causeParam, change: changeParam, kind: kindParam, q: searchTextParam })
  .transform(({ since, limit, cause, change, kind, q }) => ({ since, limit, filter: { text: q ?? null, cause: cause ?? null, change: change ?? null, kind: kind ?? null } }));

/** GET /api/v1/audit: `since` from (inclusive), `until` before (exclusive), each an ISO time or a duration back from now. */
export const auditQuery = z
  .object({
    since: sinceParam(),
    until: sinceParam(),
    actor: actorParam,
    lease: leaseIdParam,
    action: actionParam,
    phase: phaseParam,
    limit: limitParam(100, 1_000),
    cursor: cursorParam,
  })
  .transform(({ lease, ...rest }) => ({ ...rest, leaseId: lease }));

/** GET /api/v1/audit.csv: the audit page's filters, and at most `limit` rows. */
export const auditCsvQuery = z
  .object({ since: sinceParam(), until: sinceParam(), actor: actorParam, lease: leaseIdParam, action: actionParam, phase: phaseParam, limit: limitParam(100_000, 100_000) })
  .transform(({ lease, ...rest }) => ({ ...rest, leaseId: lease }));

/**
 * GET /api/v1/stream: taken as given, never refused (the first value of each; an empty one is
 * kept): a position that is not this process's is answered with `gap: true`, a source or
 * lease that does not exist is a stream that stays quiet.
 */
const firstValue = z
  .array(z.string())
  .optional()
  .transform((all) => all?.[0] ?? null);
export const streamQuery = z.object({ after: firstValue, source: firstValue, lease: firstValue, types: firstValue });

// GET /api/v1/sources, /api/v1/demo, /api/health, /api/health/live and /metrics read no
// query parameter (any given is ignored).

/** GET /api/v1/alerts: firing or resolved, of a source, a lease or a rule type; newest first, `cursor` the last id seen. */
export const alertsQuery = z.object({
  state: param(z.enum(['firing', 'resolved'], { error: oneOf('"firing" or "resolved"') }), 16),
  source: sourceParam,
  lease: leaseIdParam,
  rule: param(z.enum(ALERT_RULE_TYPES, { error: oneOf('a rule type') }), 32),
  limit: limitParam(100, 500),
  cursor: cursorParam,
});
