// Advisory locks, from pg_locks joined with pg_stat_activity: one observation per lock key,
// its holder the session that was granted it, its candidates the sessions waiting for it in
// the order they began waiting.
import type { PgPoolClientLike } from '../../db/pg-like';
import { redactUrlPassword } from '../../redact';
import { displayText } from '../../domain/display';
import type { Observation } from '../../domain/observe';
import { onlyThisPart, PartUnreadableError, unavailable } from './part-errors';

type AdvisoryRow = {
  classid: number;
  objid: number;
  objsubid: number;
  granted: boolean;
  mode: string;
  pid: number;
  application_name: string | null;
  client_addr: string | null;
  backend_start: Date | null;
  waitstart: Date | null;
};

const ADVISORY_QUERY = `
  SELECT l.classid::int8 AS classid, l.objid::int8 AS objid, l.objsubid::int AS objsubid, l.granted, l.mode, l.pid,
         a.application_name, host(a.client_addr) AS client_addr, a.backend_start, l.waitstart
    FROM pg_locks l
    JOIN pg_stat_activity a ON a.pid = l.pid
   WHERE l.locktype = 'advisory'
     AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
     AND l.pid <> pg_backend_pid()
   ORDER BY l.granted DESC, l.waitstart NULLS FIRST, l.pid`;

/**
 * The lock key as the application passed it: pg_advisory_lock(bigint) is stored as two
 * 32-bit halves with objsubid 1; pg_advisory_lock(int, int) as the two ints with objsubid 2.
 */
export function advisoryKey(row: Pick<AdvisoryRow, 'classid' | 'objid' | 'objsubid'>): string {
  if (Number(row.objsubid) === 2) return `${toInt32(row.classid)},${toInt32(row.objid)}`;
  return BigInt.asIntN(64, (BigInt(row.classid) << 32n) | BigInt(row.objid)).toString();
}
const toInt32 = (value: number) => BigInt.asIntN(32, BigInt(value)).toString();

/** The holder of an advisory lock as the source reports it: the session, by pid, application name and address. */
export const sessionName = (row: Pick<AdvisoryRow, 'pid' | 'application_name' | 'client_addr'>) =>
  `pid ${row.pid}${row.application_name ? ` ${displayText(row.application_name, 60)}` : ''}${row.client_addr ? ` @ ${row.client_addr}` : ' (local socket)'}`;

/** One lock key's observation from its rows (granted first, then waiters in the order they began waiting). */
function advisoryObservation(key: string, lockRows: AdvisoryRow[]): Observation {
  const holders = lockRows.filter((r) => r.granted);
  const waiters = lockRows.filter((r) => !r.granted);
  const first = holders[0];
  return {
    key: `advisory/${key}`,
    kind: 'advisory',
    // Nobody holds it when only waiters are left (the holder just went): they are queued.
    holder: first ? sessionName(first) : null,
    token: null,
    ttlMs: null,
    remainingMs: null,
    candidates: waiters.map((w) => ({ holder: sessionName(w), token: null })),
    detail: {
      holders: holders.map((h) => ({
        pid: h.pid,
        applicationName: h.application_name === null ? null : displayText(h.application_name, 60),
        clientAddr: h.client_addr,
        mode: h.mode,
        sessionStartedAt: h.backend_start?.toISOString() ?? null,
      })),
      waiters: waiters.map((w) => ({ pid: w.pid, mode: w.mode, waitingSince: w.waitstart?.toISOString() ?? null })),
    },
  };
}

/** Every advisory lock of the database held or awaited by another session. `source`: the source's name, for errors. */
export async function readAdvisory(source: string, client: PgPoolClientLike): Promise<Observation[]> {
  let rows: AdvisoryRow[];
  try {
    rows = (await client.query<AdvisoryRow>(ADVISORY_QUERY)).rows;
  } catch (error) {
    if (onlyThisPart(error)) throw new PartUnreadableError(source, `advisory locks (pg_locks): ${redactUrlPassword((error as Error).message)}`, { cause: error });
    throw unavailable(source, error, 'reading pg_locks');
  }
  const byKey = new Map<string, AdvisoryRow[]>();
  for (const row of rows) {
    const key = advisoryKey(row);
    byKey.set(key, [...(byKey.get(key) ?? []), row]);
  }
  return [...byKey].map(([key, lockRows]) => advisoryObservation(key, lockRows));
}
