// Query parameters and path ids of the read API, validated at the edge: a bad one is a 400
// that names it, and nothing unchecked reaches a query. The queries' schemas are in
// lib/api/query-schemas.ts; parseQuery checks one and turns its first issue into the 400.
import { z } from 'zod';
import type { EventType } from '../domain/types';
import { formatLeaseId, InvalidLeaseIdError, leaseIdFromSegments } from '../domain/lease-id';
import { RequestError } from '../errors';
import { quoted } from './refusal';
import { CONTROL, cursorParam, leaseEventsQuery, leaseRenewalsQuery, leasesQuery, limitParam, queryValues, sinceParam, typesParam, type QueryValues } from './query-schemas';
import { systemClock } from '../time/clock';

export class InvalidParameterError extends RequestError {
  readonly status = 400;
  readonly code = 'invalid_parameter';
  constructor(readonly parameter: string, expected: string, found: string | null, where: 'query' | 'path' = 'query') {
    super(`The ${where} parameter "${parameter}" must be ${expected}${found === null ? '' : `, not ${quoted(found)}`}.`);
    this.name = 'InvalidParameterError';
  }
}

/** The longest id of a user, token, endpoint, rule or silence (they are UUIDs, rule ids and such: far shorter). */
export const MAX_PATH_ID_CHARS = 200;

/**
 * The `{id}` of /api/v1/users/{id}, /tokens/{id}, /webhooks/{id}[/test|/replay],
 * /alert-rules/{id} and /silences/{id}, checked before the store is asked: an id with a control
 * character (U+0000 cannot even be put in a query) or longer than any id names nothing, and is
 * a 400 that says so rather than a 404 or a 500.
 */
export async function pathId(params: Promise<{ id: string }>): Promise<string> {
  const { id } = await params;
  if (id.length > MAX_PATH_ID_CHARS) throw new InvalidParameterError('id', `at most ${MAX_PATH_ID_CHARS} characters long, not ${id.length}`, null, 'path');
  if (CONTROL.test(id) || id === '') throw new InvalidParameterError('id', 'an id without control characters', id, 'path');
  return id;
}

export class NotFoundError extends RequestError {
  readonly status = 404;
  readonly code = 'not_found';
  constructor(what: string) {
    super(what);
    this.name = 'NotFoundError';
  }
}

/** A lease id is at most this long (a stored key longer than 1 KiB is kept as its head and a digest). */
export const MAX_LEASE_ID_CHARS = 8_192;
export { MAX_INT64, MAX_PARAMETER_CHARS, MAX_TIME_MS, MIN_TIME_MS, parseIsoTime } from './query-schemas';

/** The first issue of a query's schema as the 400 naming its parameter (the issue's path) and quoting its value (the issue's input). */
export function queryError(error: z.ZodError): InvalidParameterError {
  const issue = error.issues[0];
  const parameter = issue?.path[0];
  return new InvalidParameterError(parameter === undefined ? 'query' : String(parameter), issue?.message ?? 'valid', typeof issue?.input === 'string' ? issue.input : null);
}

/** A route's query checked by its schema (lib/api/query-schemas.ts), or the InvalidParameterError (400) of its first issue. */
export function parseQuery<T extends z.ZodType<unknown, QueryValues>>(schema: T, params: URLSearchParams): z.output<T> {
  const result = schema.safeParse(queryValues(params), { reportInput: true });
  if (!result.success) throw queryError(result.error);
  return result.data;
}

// One parameter at a time, as the routes' schemas check it.

/** `since`: an ISO timestamp, or a duration back from now (30s, 15m, 6h, 7d). */
export function parseSince(params: URLSearchParams, now = systemClock.wall()): Date | undefined {
  return parseQuery(z.object({ since: sinceParam(now) }), params).since;
}

export function parseLimit(params: URLSearchParams, fallback: number, max: number): number {
  return parseQuery(z.object({ limit: limitParam(fallback, max) }), params).limit;
}

/** An opaque cursor from a previous page (`next`). */
export function parseCursor(params: URLSearchParams): bigint | undefined {
  return parseQuery(z.object({ cursor: cursorParam }), params).cursor;
}

export function parseTypes(params: URLSearchParams): EventType[] | undefined {
  return parseQuery(z.object({ types: typesParam }), params).types;
}

export function parseLeaseFilter(params: URLSearchParams) {
  return parseQuery(leasesQuery, params);
}

// ---------------------------------------------------------------------------- lease ids

/**
 * The lease id named by a route's path segments (already decoded once by Next). A control
 * character can never be part of a stored key (the collector stores them escaped, as \x00),
 * and an id longer than any stored one cannot name one either: both are a 400
 * (invalid_lease_id) that says so, before the store is asked.
 */
export function leaseIdParam(segments: readonly string[]): string {
  const id = formatLeaseId(leaseIdFromSegments(segments));
  if (id.length > MAX_LEASE_ID_CHARS) throw new InvalidLeaseIdError(id, `it is ${id.length} characters long, at most ${MAX_LEASE_ID_CHARS} are possible`);
  const control = CONTROL.exec(id);
  if (control) {
    const code = control[0].charCodeAt(0);
    const hex = code.toString(16).padStart(2, '0');
    const escaped = code < 0x80 ? `\\x${hex}` : `\\u00${hex}`;
    throw new InvalidLeaseIdError(quoted(id).slice(1, -1), `it holds the control character U+00${hex.toUpperCase()}, which no stored key does: keys show it escaped, as ${escaped}`);
  }
  return id;
}

/**
 * What the path of /api/v1/leases/{id}[/events|/renewals] names, and its query. The whole
 * path is an id (a key may itself end in "events" or "renewals"); with such an ending, it may
 * also name that list of the lease before it (`prefix`, checked as an id only when the whole
 * path names no lease). The id and the query of /events or /renewals are checked here, before
 * the store is asked: a bad value is a 400 naming it.
 */
export type LeasePath =
  | { whole: string; sub: null }
  | { whole: string; sub: 'events'; prefix: readonly string[]; query: z.output<typeof leaseEventsQuery> }
  | { whole: string; sub: 'renewals'; prefix: readonly string[]; since: Date | undefined };

export function parseLeasePath(segments: readonly string[], params: URLSearchParams): LeasePath {
  const whole = leaseIdParam(segments);
  const last = segments.length > 1 ? segments.at(-1) : undefined;
  const prefix = segments.slice(0, -1);
  if (last === 'events') return { whole, sub: last, prefix, query: parseQuery(leaseEventsQuery, params) };
  if (last === 'renewals') return { whole, sub: last, prefix, since: parseQuery(leaseRenewalsQuery, params).since };
  return { whole, sub: null };
}
