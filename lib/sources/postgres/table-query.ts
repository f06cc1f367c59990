// The SQL that reads one lease table, in Leasehold's layout or ShedLock's, in one shape
// common to both (texts bounded, times computed by the database), and the columns and
// types each layout must have.
import { EXACT_TEXT_HEAD_BYTES, EXACT_TEXT_MAX_BYTES } from '../../domain/display';

/** A token is read as a whole number of at most this many digits (2^256 has 78); the store's column holds as many. */
export const MAX_TOKEN_DIGITS = 78;

export type TableRow = {
  name: string | null;
  name_bytes: number | null;
  name_digest: string | null;
  holder: string | null;
  holder_bytes: number | null;
  holder_digest: string | null;
  token: string | null;
  remaining_ms: number | null;
  expiry_infinite: 'infinity' | '-infinity' | null;
  ttl_ms: number | null;
};

/**
 * Which rows a table query returns: every row; the rows whose name is one of $1 (a text[]),
 * for a targeted read; or the rows changed since a watermark (delta.ts): written by a
 * transaction not older than $1 (the low 32 bits of an earlier snapshot's xmin, compared as
 * transaction ids are, modulo 2^32), or whose expiry passed since $2 (an earlier now()).
 */
export type RowFilter = 'all' | 'named' | 'changed';

function quoteTable(table: string): string {
  return table
    .split('.')
    .map((part) => `"${part}"`)
    .join('.');
}

/**
 * A text column, bounded: whole up to EXACT_TEXT_MAX_BYTES bytes, else its first characters,
 * with its length and the SHA-256 of its UTF-8 bytes (what lib/sources/exact.ts would compute).
 */
function boundedText(expression: string, alias: string): string {
  return `CASE WHEN octet_length(${expression}) <= ${EXACT_TEXT_MAX_BYTES} THEN ${expression} ELSE left(${expression}, ${EXACT_TEXT_HEAD_BYTES}) END AS ${alias},
          octet_length(${expression}) AS ${alias}_bytes,
          CASE WHEN octet_length(${expression}) > ${EXACT_TEXT_MAX_BYTES} THEN encode(sha256(convert_to(${expression}, 'UTF8')), 'hex') END AS ${alias}_digest`;
}

/** Milliseconds from b to a, for finite timestamps only: never an overflow, whatever the dates (no interval is formed). */
const msBetween = (a: string, b: string) => `CASE WHEN isfinite(${a}) AND isfinite(${b}) THEN ((EXTRACT(EPOCH FROM ${a}) - EXTRACT(EPOCH FROM ${b})) * 1000)::float8 END`;
const infinity = (column: string) => `CASE WHEN ${column} = 'infinity' THEN 'infinity' WHEN ${column} = '-infinity' THEN '-infinity' END`;

/**
 * The SELECT for one configured table, in a shape common to both layouts. A timestamp
 * column without a time zone is read as UTC: that is what ShedLock writes (its "use DB time"
 * statements store timezone('utc', now())), whatever the session's time zone.
 */
export function tableQuery(table: string, format: 'leasehold' | 'shedlock', withoutZone: Set<string>, filter: RowFilter = 'all'): string {
  const at = (column: string) => (withoutZone.has(column) ? `(${column}::timestamp AT TIME ZONE 'UTC')` : column);
  const expiry = at(format === 'leasehold' ? 'expires_at' : 'lock_until');
  const where = {
    all: '',
    named: ' WHERE name::text = ANY($1::text[])',
    changed: ` WHERE name IS NOT NULL AND ((xmin::text::bigint - $1::bigint + 4294967296) % 4294967296 < 2147483648 OR (${expiry} > $2::timestamptz AND ${expiry} <= now()))`,
  }[filter];
  const t = `${quoteTable(table)}${where}`;
  if (format === 'leasehold') {
    return `SELECT ${boundedText('name::text', 'name')}, ${boundedText('owner::text', 'holder')}, left(token::text, ${MAX_TOKEN_DIGITS + 2}) AS token,
                   ${msBetween(expiry, 'now()')} AS remaining_ms, ${infinity('expires_at')} AS expiry_infinite, NULL::float8 AS ttl_ms
              FROM ${t}`;
  }
  return `SELECT ${boundedText('name::text', 'name')}, ${boundedText('locked_by::text', 'holder')}, NULL::text AS token,
                 ${msBetween(expiry, 'now()')} AS remaining_ms, ${infinity('lock_until')} AS expiry_infinite,
                 ${msBetween(expiry, at('locked_at'))} AS ttl_ms
            FROM ${t}`;
}

/**
 * The rows changed since a watermark (filter 'changed'), with the table's count of named
 * rows and of nameless ones taken in the same statement (one snapshot): a row deleted since
 * shows as a count lower than the rows known. Always one row at least: when nothing changed,
 * one whose name is NULL.
 */
export function changedRowsQuery(table: string, format: 'leasehold' | 'shedlock', withoutZone: Set<string>): string {
  return `SELECT d.*, c.named::float8 AS named, c.nameless::float8 AS nameless
            FROM (SELECT count(name) AS named, count(*) - count(name) AS nameless FROM ${quoteTable(table)}) c
            LEFT JOIN (${tableQuery(table, format, withoutZone, 'changed')}) d ON true`;
}

export const EXPECTED_COLUMNS = { leasehold: ['name', 'owner', 'expires_at', 'token'], shedlock: ['name', 'lock_until', 'locked_at', 'locked_by'] };
export const TIME_COLUMNS = { leasehold: ['expires_at'], shedlock: ['lock_until', 'locked_at'] };
export const TIME_TYPES = new Set(['timestamp with time zone', 'timestamp without time zone', 'date']);
