// The SQL of the guarded actions on a PostgreSQL source (force.ts sends it). Each action is
// ONE statement: the compare (holder, token, still unexpired) and the change happen in the
// same UPDATE, and the same statement reads the row as it was, so a conflict can say what it
// found. Text only, no I/O: plan() shows these exact statements.
import { quoteTable } from '../../lease/postgres';
import type { AdminActionRow } from '../../domain/admin-actions';

/** What a table statement returns: `done` when the row matched and was changed; else the row as the statement found it. */
export type ForcedRow = { done: boolean | null; found: boolean | null; previous_token: string | null; new_token: string | null; holder: string | null; token: string | null; live: boolean | null };

// A timestamp column without a time zone holds UTC (ShedLock writes timezone('utc', now())),
// whatever the session's time zone: read and written as such, as the adapter reads it.
const readAt = (column: string, withoutZone: Set<string>, alias = '') =>
  withoutZone.has(column) ? `(${alias}${column}::timestamp AT TIME ZONE 'UTC')` : `${alias}${column}`;
const writeAt = (column: string, withoutZone: Set<string>, value: string) => (withoutZone.has(column) ? `timezone('UTC', ${value})` : value);
const SOON = `now() + $4 * interval '1 millisecond'`;

// The row as the statement's snapshot saw it, beside the outcome of the UPDATE: a conflict
// reports it without a second round trip.
const OUTCOME = `SELECT f.done, f.previous_token, f.new_token, s.found, s.holder, s.token, s.live
    FROM (SELECT 1) AS one LEFT JOIN forced f ON true LEFT JOIN seen s ON true`;

/**
 * Leasehold's lease table (lib/lease/postgres.ts). Parameters: $1 name, $2 holder, $3 token,
 * $4 quarantine ms (0 for none), $5 the quarantine holder (with a quarantine only).
 *
 * The token is raised by one in the same UPDATE. lib/lease grants with `token = token + 1` on
 * a free or expired row and never lowers it, so every later grant is above the new token;
 * the old holder's renew and release compare its token and fail from now on.
 * force-expire leaves the owner (the row reads as expired); force-release (its row's
 * `clearsHolder`) clears it as lib/lease's own release does (the row reads as released). With a quarantine the row is
 * held by the quarantine holder until now() + $4; lib/lease grants nobody a row before it expires.
 */
export function leaseTableStatement(table: string, withoutZone: Set<string>, action: Pick<AdminActionRow, 'clearsHolder'>, quarantine: boolean): string {
  const t = quoteTable(table);
  const owner = quarantine ? ', owner = $5' : action.clearsHolder ? ', owner = NULL' : '';
  return `WITH seen AS (
    SELECT true AS found, owner::text AS holder, token::text AS token, ${readAt('expires_at', withoutZone)} > now() AS live FROM ${t} WHERE name = $1),
  forced AS (
    UPDATE ${t} AS l SET token = l.token + 1, expires_at = ${writeAt('expires_at', withoutZone, SOON)}${owner}
     WHERE l.name = $1 AND l.owner = $2 AND l.token = $3::numeric AND ${readAt('expires_at', withoutZone, 'l.')} > now()
    RETURNING true AS done, (l.token - 1)::text AS previous_token, l.token::text AS new_token)
  ${OUTCOME}`;
}

/**
 * ShedLock's table (unfenced): force-release only. Parameters as above ($3 must be null: a
 * ShedLock row has no token). The row is never deleted, only its lock_until moved to now
 * (as ShedLock's own unlock does) or, with a quarantine, to now() + $4 under the quarantine
 * holder: ShedLock takes a row only once lock_until has passed.
 */
export function shedlockStatement(table: string, withoutZone: Set<string>, quarantine: boolean): string {
  const t = quoteTable(table);
  const holder = quarantine ? `, locked_by = $5, locked_at = ${writeAt('locked_at', withoutZone, 'now()')}` : '';
  return `WITH seen AS (
    SELECT true AS found, locked_by::text AS holder, NULL::text AS token, ${readAt('lock_until', withoutZone)} > now() AS live FROM ${t} WHERE name = $1),
  forced AS (
    UPDATE ${t} AS l SET lock_until = ${writeAt('lock_until', withoutZone, SOON)}${holder}
     WHERE l.name = $1 AND l.locked_by = $2 AND $3::numeric IS NULL AND ${readAt('lock_until', withoutZone, 'l.')} > now()
    RETURNING true AS done, NULL::text AS previous_token, NULL::text AS new_token)
  ${OUTCOME}`;
}

/** The row as it is now, for a conflict the statement's snapshot could not describe. */
export function currentRowStatement(table: string, format: 'leasehold' | 'shedlock', withoutZone: Set<string>): string {
  const [holder, token, expiry] = format === 'leasehold' ? ['owner', 'token::text', 'expires_at'] : ['locked_by', 'NULL::text', 'lock_until'];
  return `SELECT true AS found, ${holder}::text AS holder, ${token} AS token, ${readAt(expiry, withoutZone)} > now() AS live FROM ${quoteTable(table)} WHERE name = $1`;
}

const ADVISORY_LOCK = `l.locktype = 'advisory' AND l.granted
     AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
     AND l.classid = $1::oid AND l.objid = $2::oid AND l.objsubid = $3::int2`;

export type AdvisoryHolderRow = { pid: number; application_name: string | null; client_addr: string | null; backend_start: string; version: number };

/** The sessions holding one advisory lock (granted), in the adapter's order. $1 classid, $2 objid, $3 objsubid. */
export const ADVISORY_HOLDERS = `SELECT l.pid, a.application_name, host(a.client_addr) AS client_addr, a.backend_start::text AS backend_start,
         current_setting('server_version_num')::int AS version
    FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
   WHERE ${ADVISORY_LOCK} AND l.pid <> pg_backend_pid()
   ORDER BY l.pid`;

/**
 * Ends the session holding an advisory lock, in one statement that checks, as it terminates,
 * that this very session (pid, start time, application name, address: a pid alone may have
 * been reused) still holds that lock. Parameters: $1-$3 the lock, $4 pid, $5 backend_start,
 * $6 application_name, $7 client address. From PostgreSQL 14 on, it waits up to 3 s for
 * the session to be gone, so the lock is free when it returns.
 */
export function terminateStatement(serverVersion: number): string {
  return `SELECT pg_terminate_backend(l.pid${serverVersion >= 140000 ? ', 3000' : ''}) AS terminated
    FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
   WHERE ${ADVISORY_LOCK}
     AND l.pid = $4 AND a.backend_start = $5::timestamptz
     AND a.application_name IS NOT DISTINCT FROM $6 AND host(a.client_addr) IS NOT DISTINCT FROM $7`;
}

/**
 * The lock as pg_locks stores it, from the key the adapter shows: a bigint key as its two
 * 32-bit halves with objsubid 1; an (int, int) key as the two ints with objsubid 2. Null when
 * the text is neither.
 */
export function advisoryLockOf(text: string): { classid: string; objid: string; objsubid: '1' | '2' } | null {
  const pair = /^(-?\d{1,10}),(-?\d{1,10})$/.exec(text);
  if (pair) {
    const [a, b] = [BigInt(pair[1]!), BigInt(pair[2]!)];
    if (BigInt.asIntN(32, a) !== a || BigInt.asIntN(32, b) !== b) return null;
    return { classid: BigInt.asUintN(32, a).toString(), objid: BigInt.asUintN(32, b).toString(), objsubid: '2' };
  }
  if (!/^-?\d{1,19}$/.test(text)) return null;
  const key = BigInt(text);
  if (BigInt.asIntN(64, key) !== key) return null;
  const bits = BigInt.asUintN(64, key);
  return { classid: (bits >> 32n).toString(), objid: (bits & 0xffffffffn).toString(), objsubid: '1' };
}
