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
export function tableQuery(table: string, format: 'leasehold' | 'shedlock', withoutZone: Set<string>, onlyNamed = false): string {
  // onlyNamed: the rows whose name is one of $1 (a text[]), for a targeted read.
  const t = `${quoteTable(table)}${onlyNamed ? ' WHERE name::text = ANY($1::text[])' : ''}`;
  const at = (column: string) => (withoutZone.has(column) ? `(${column}::timestamp AT TIME ZONE 'UTC')` : column);
  if (format === 'leasehold') {
    return `SELECT ${boundedText('name::text', 'name')}, ${boundedText('owner::text', 'holder')}, left(token::text, ${MAX_TOKEN_DIGITS + 2}) AS token,
                   ${msBetween(at('expires_at'), 'now()')} AS remaining_ms, ${infinity('expires_at')} AS expiry_infinite, NULL::float8 AS ttl_ms
              FROM ${t}`;
  }
  return `SELECT ${boundedText('name::text', 'name')}, ${boundedText('locked_by::text', 'holder')}, NULL::text AS token,
                 ${msBetween(at('lock_until'), 'now()')} AS remaining_ms, ${infinity('lock_until')} AS expiry_infinite,
                 ${msBetween(at('lock_until'), at('locked_at'))} AS ttl_ms
            FROM ${t}`;
}

export const EXPECTED_COLUMNS = { leasehold: ['name', 'owner', 'expires_at', 'token'], shedlock: ['name', 'lock_until', 'locked_at', 'locked_by'] };
export const TIME_COLUMNS = { leasehold: ['expires_at'], shedlock: ['lock_until', 'locked_at'] };
export const TIME_TYPES = new Set(['timestamp with time zone', 'timestamp without time zone', 'date']);
