// Query parameters and path ids of the read API, validated at the edge: a bad one is a 400
// that names it, and nothing unchecked reaches a query. Every value is checked for what the
// store can hold (PostgreSQL's bigint and timestamptz, text without NUL) as well as for what
// the API means by it, so that a hostile value is a 400 here rather than a 500 from SQL.
import { z } from 'zod';
import { EVENT_TYPES, LEASE_STATES, type EventType } from '../domain/types';
import { formatLeaseId, InvalidLeaseIdError, leaseIdFromSegments } from '../domain/lease-id';
import { quoted } from './refusal';

export class InvalidParameterError extends Error {
  constructor(readonly parameter: string, expected: string, found: string | null) {
    super(`The query parameter "${parameter}" must be ${expected}${found === null ? '' : `, not ${quoted(found)}`}.`);
    this.name = 'InvalidParameterError';
  }
}

export class NotFoundError extends Error {
  constructor(what: string) {
    super(what);
    this.name = 'NotFoundError';
  }
}

/** C0 controls, DEL and C1 controls: never in a parameter, never in a stored key (those are escaped as \xNN or \uNNNN). */
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** Any query parameter is at most this long, unless its own rule says less. */
export const MAX_PARAMETER_CHARS = 1_000;
/** A lease id is at most this long (a stored key longer than 1 KiB is kept as its head and a digest). */
export const MAX_LEASE_ID_CHARS = 8_192;

/**
 * The one value of a query parameter, or undefined when it is absent or empty. Given more
 * than once, longer than `maxChars` or holding a control character: a 400 naming it.
 */
export function singleParam(params: URLSearchParams, name: string, maxChars = MAX_PARAMETER_CHARS): string | undefined {
  const all = params.getAll(name);
  if (all.length > 1) throw new InvalidParameterError(name, `given once, not ${all.length} times`, null);
  const raw = all[0];
  if (raw === undefined || raw === '') return undefined;
  if (raw.length > maxChars) throw new InvalidParameterError(name, `at most ${maxChars} characters long, not ${raw.length}`, null);
  if (CONTROL.test(raw)) throw new InvalidParameterError(name, 'text without control characters', raw);
  return raw;
}

// ---------------------------------------------------------------------------- times

const DURATION = /^(\d{1,6})(s|m|h|d)$/;
const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(Z|[+-]\d{2}(?::?\d{2})?)?$/i;
/** The times both PostgreSQL's timestamptz and a JS Date hold, written with a four-digit year. */
export const MIN_TIME_MS = Date.parse('0001-01-01T00:00:00.000Z');
export const MAX_TIME_MS = Date.parse('9999-12-31T23:59:59.999Z');
const SINCE_EXPECTED = 'an ISO time (2026-12-02T06:00:00Z) from year 1 to 9999, or a duration such as 15m, 6h or 7d (1-6 digits)';

/** `since`: an ISO timestamp, or a duration back from now (30s, 15m, 6h, 7d). */
export function parseSince(params: URLSearchParams, now = Date.now()): Date | undefined {
  const raw = singleParam(params, 'since', 64);
  if (raw === undefined) return undefined;
  const duration = DURATION.exec(raw);
  if (duration) {
    const at = now - Number(duration[1]) * UNIT_MS[duration[2] as keyof typeof UNIT_MS];
    if (at < MIN_TIME_MS) throw new InvalidParameterError('since', 'a duration that reaches back no further than year 1', raw);
    return new Date(at);
  }
  const at = parseIsoTime(raw);
  if (at === null) throw new InvalidParameterError('since', SINCE_EXPECTED, raw);
  return new Date(at);
}

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

// ---------------------------------------------------------------------------- numbers

const wholeNumber = z.string().regex(/^\d{1,15}$/).transform(Number);

export function parseLimit(params: URLSearchParams, fallback: number, max: number): number {
  const raw = singleParam(params, 'limit', 32);
  if (raw === undefined) return fallback;
  const value = wholeNumber.safeParse(raw);
  if (!value.success || value.data < 1 || value.data > max) throw new InvalidParameterError('limit', `a whole number from 1 to ${max}`, raw);
  return value.data;
}

/** The largest value of PostgreSQL's bigint, which event ids (and so cursors) are. */
export const MAX_INT64 = 9_223_372_036_854_775_807n;
const cursorSchema = z
  .string()
  .regex(/^\d{1,19}$/)
  .transform((text) => BigInt(text))
  .refine((value) => value <= MAX_INT64);

/** An opaque cursor from a previous page (`next`). */
export function parseCursor(params: URLSearchParams): bigint | undefined {
  const raw = singleParam(params, 'cursor', 32);
  if (raw === undefined) return undefined;
  const cursor = cursorSchema.safeParse(raw);
  if (!cursor.success) throw new InvalidParameterError('cursor', 'the "next" value of a previous page (a whole number of at most 19 digits, below 2^63)', raw);
  return cursor.data;
}

// ---------------------------------------------------------------------------- names

export function parseTypes(params: URLSearchParams): EventType[] | undefined {
  const raw = singleParam(params, 'types', 500);
  if (raw === undefined) return undefined;
  const types = raw.split(',').map((t) => t.trim());
  const bad = types.find((t) => !(EVENT_TYPES as readonly string[]).includes(t));
  if (bad !== undefined) throw new InvalidParameterError('types', `a comma-separated list of ${EVENT_TYPES.join(', ')}`, bad);
  return types as EventType[];
}

const stateSchema = z.enum(LEASE_STATES);
const SOURCE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

/** `q`: part of a key, holder or lease id, as the lists filter on it. */
export function parseSearchText(params: URLSearchParams): string | undefined {
  return singleParam(params, 'q', 200);
}

export function parseLeaseFilter(params: URLSearchParams) {
  const state = singleParam(params, 'state', 32);
  if (state !== undefined && !stateSchema.safeParse(state).success) throw new InvalidParameterError('state', `one of ${LEASE_STATES.join(', ')}`, state);
  const q = parseSearchText(params);
  const source = singleParam(params, 'source', 64);
  if (source !== undefined && !SOURCE_NAME.test(source)) throw new InvalidParameterError('source', 'a source name', source);
  return { state: state as z.infer<typeof stateSchema> | undefined, q, source, limit: parseLimit(params, 10_000, 100_000) };
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
