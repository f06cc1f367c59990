// PostgreSQL source: lease tables (Leasehold's own layout and ShedLock's), and advisory
// locks from pg_locks. Read-only: it never writes to the observed database.
//
//   leasehold  leases(name, owner, expires_at, token)          -> key "<table>/<name>", fenced
//   shedlock   shedlock(name, lock_until, locked_at, locked_by) -> key "<table>/<name>", unfenced
//   advisory   pg_locks (locktype 'advisory') + pg_stat_activity -> key "advisory/<lock key>",
//              holder = the session holding it, waiters = ungranted requests in the order they began waiting
//
// Expiry and remaining time are computed by the database in the same query (now() on one
// clock), so no client clock is ever compared with the server's.
import type { PgPoolClientLike, PgPoolLike } from '../../db/pg-like';
import pg from 'pg';
import type { PostgresSourceConfig } from '../../config';
import { redactUrlPassword } from '../../config';
import { displayText } from '../../domain/display';
import type { Observation } from '../../domain/observe';
import { SourceUnavailableError } from '../errors';
import type { LeaseSource, SourceSnapshot } from '../types';

const READ_TIMEOUT_MS = 5_000;

type TableRow = { name: string; holder: string | null; token: string | null; remaining_ms: number | null; ttl_ms: number | null };
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

function quoteTable(table: string): string {
  return table
    .split('.')
    .map((part) => `"${part}"`)
    .join('.');
}

/**
 * The SELECT for one configured table, in a shape common to both layouts. A timestamp
 * column without a time zone is read as UTC: that is what ShedLock writes (its "use DB time"
 * statements store timezone('utc', now())), whatever the session's time zone.
 */
function tableQuery(table: string, format: 'leasehold' | 'shedlock', withoutZone: Set<string>): string {
  const t = quoteTable(table);
  const at = (column: string) => (withoutZone.has(column) ? `(${column} AT TIME ZONE 'UTC')` : column);
  if (format === 'leasehold') {
    return `SELECT name::text AS name, owner::text AS holder, token::text AS token,
                   (EXTRACT(EPOCH FROM (${at('expires_at')} - now())) * 1000)::float8 AS remaining_ms, NULL::float8 AS ttl_ms
              FROM ${t}`;
  }
  return `SELECT name::text AS name, locked_by::text AS holder, NULL::text AS token,
                 (EXTRACT(EPOCH FROM (${at('lock_until')} - now())) * 1000)::float8 AS remaining_ms,
                 (EXTRACT(EPOCH FROM (${at('lock_until')} - ${at('locked_at')})) * 1000)::float8 AS ttl_ms
            FROM ${t}`;
}

const EXPECTED_COLUMNS = { leasehold: ['name', 'owner', 'expires_at', 'token'], shedlock: ['name', 'lock_until', 'locked_at', 'locked_by'] };

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

const sessionName = (row: AdvisoryRow) =>
  `pid ${row.pid}${row.application_name ? ` ${displayText(row.application_name, 60)}` : ''}${row.client_addr ? ` @ ${row.client_addr}` : ' (local socket)'}`;

/** `pool`: read through this pool (the embedded demo's PGlite, lib/db/pglite-pool.ts) instead of config.url; close() leaves it open. */
export function createPostgresSource(config: PostgresSourceConfig, defaultPollMs: number, given?: PgPoolLike): LeaseSource {
  const pool: PgPoolLike = given ?? new pg.Pool({
    connectionString: config.url,
    max: 1,
    connectionTimeoutMillis: READ_TIMEOUT_MS,
    statement_timeout: READ_TIMEOUT_MS,
    query_timeout: READ_TIMEOUT_MS + 500,
    idleTimeoutMillis: 30_000,
    application_name: 'leasehold-observer',
  });
  pool.on('error', () => {});

  const unavailable = (error: unknown, what: string) => {
    const code = (error as { code?: string }).code;
    const message = redactUrlPassword((error as Error).message ?? String(error));
    return new SourceUnavailableError(config.name, `${what}: ${code && !message.includes(code) ? `${code} ` : ''}${message}`, { cause: error });
  };

  // Each table's layout is checked once (and again after any failure): the columns it must
  // have, and which timestamps carry no time zone.
  const layouts = new Map<string, Set<string>>();

  async function layoutOf(client: PgPoolClientLike, table: string, format: 'leasehold' | 'shedlock'): Promise<Set<string>> {
    const known = layouts.get(table);
    if (known) return known;
    const [schema, name] = table.includes('.') ? table.split('.') : [null, table];
    const { rows } = await client.query<{ column_name: string; data_type: string }>(
      `SELECT column_name, data_type FROM information_schema.columns
        WHERE table_schema = COALESCE($1, current_schema()) AND table_name = $2`,
      [schema, name],
    );
    if (rows.length === 0) {
      throw new SourceUnavailableError(config.name, `table ${table} (format ${format}) does not exist, or this user cannot see it`);
    }
    const found = new Map(rows.map((r) => [r.column_name, r.data_type]));
    const missing = EXPECTED_COLUMNS[format].filter((column) => !found.has(column));
    if (missing.length > 0) {
      throw new SourceUnavailableError(
        config.name,
        `table ${table} is not in the ${format} layout: it has no column ${missing.join(', ')} (expected ${EXPECTED_COLUMNS[format].join(', ')}; found ${[...found.keys()].join(', ')})`,
      );
    }
    const withoutZone = new Set([...found].filter(([, type]) => type === 'timestamp without time zone').map(([column]) => column));
    layouts.set(table, withoutZone);
    return withoutZone;
  }

  async function readTable(client: PgPoolClientLike, table: string, format: 'leasehold' | 'shedlock'): Promise<Observation[]> {
    let rows: TableRow[];
    try {
      rows = (await client.query<TableRow>(tableQuery(table, format, await layoutOf(client, table, format)))).rows;
    } catch (error) {
      layouts.delete(table);
      if (error instanceof SourceUnavailableError) throw error;
      const code = (error as { code?: string }).code;
      if (code === '42P01' || code === '42703' || code === '42883' || code === '22P02' || code === '42804') {
        throw new SourceUnavailableError(config.name, `table ${table} (format ${format}): ${(error as Error).message}`, { cause: error });
      }
      throw unavailable(error, `reading table ${table}`);
    }
    return rows.map((row): Observation => {
      const remaining = row.remaining_ms === null ? null : Math.round(row.remaining_ms);
      let token: bigint | null = null;
      if (row.token !== null) token = BigInt(row.token);
      return {
        key: `${table}/${displayText(row.name)}`,
        kind: 'lock',
        holder: row.holder === null || row.holder === '' ? null : displayText(row.holder),
        token,
        ttlMs: row.ttl_ms === null ? null : Math.round(row.ttl_ms),
        remainingMs: remaining,
        // Leasehold's release sets owner NULL; ShedLock's moves lock_until back to now.
        released: row.holder === null,
        candidates: [],
      };
    });
  }

  async function readAdvisory(client: PgPoolClientLike): Promise<Observation[]> {
    let rows: AdvisoryRow[];
    try {
      rows = (await client.query<AdvisoryRow>(ADVISORY_QUERY)).rows;
    } catch (error) {
      throw unavailable(error, 'reading pg_locks');
    }
    const byKey = new Map<string, AdvisoryRow[]>();
    for (const row of rows) {
      const key = advisoryKey(row);
      byKey.set(key, [...(byKey.get(key) ?? []), row]);
    }
    return [...byKey].map(([key, lockRows]): Observation => {
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
    });
  }

  async function withClient<T>(work: (client: PgPoolClientLike) => Promise<T>, signal: AbortSignal): Promise<T> {
    if (signal.aborted) throw new SourceUnavailableError(config.name, 'the read was cancelled');
    let client: PgPoolClientLike;
    try {
      client = await pool.connect();
    } catch (error) {
      throw unavailable(error, 'connecting');
    }
    let succeeded = false;
    try {
      const result = await work(client);
      succeeded = true;
      return result;
    } finally {
      // A failed read may have left the connection in any state: discard it.
      client.release(succeeded ? undefined : true);
    }
  }

  return {
    name: config.name,
    backend: 'postgres',
    pollMs: config.pollMs ?? defaultPollMs,

    async snapshot(signal): Promise<SourceSnapshot> {
      return withClient(async (client) => {
        const observations: Observation[] = [];
        for (const { table, format } of config.tables) observations.push(...(await readTable(client, table, format)));
        if (config.advisoryLocks) observations.push(...(await readAdvisory(client)));
        const version = (await client.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version ?? null;
        return { observations, status: { serverVersion: version } };
      }, signal);
    },

    async close() {
      if (!given) await pool.end();
    },
  };
}
