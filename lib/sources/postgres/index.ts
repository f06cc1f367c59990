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
//
// Rows are hostile until judged, one by one: a name or owner of a megabyte is sent as its
// first characters, its length and its SHA-256 (computed by the database); an expiry of
// 'infinity' or 4000 BC, a token of 1.5 or 'abc' make that one row a lease in state
// `unknown` with its reason, never the whole read fail. A table that cannot be read (renamed,
// another layout, locked by another session for over a second) is reported as unread, and the source's other
// tables and its advisory locks are still read (SourceSnapshot.unread).
import type { PgPoolClientLike, PgPoolLike } from '../../db/pg-like';
import pg from 'pg';
import type { PostgresSourceConfig } from '../../config';
import { redactUrlPassword } from '../../config';
import { displayText, EXACT_TEXT_HEAD_BYTES, EXACT_TEXT_MAX_BYTES } from '../../domain/display';
import { unreadableObservation, type Observation } from '../../domain/observe';
import { SourceUnavailableError } from '../errors';
import { exactOf, exactOfHead } from '../exact';
import type { LeaseSource, SourceSnapshot, UnreadScope } from '../types';

const READ_TIMEOUT_MS = 5_000;
const LOCK_TIMEOUT_MS = 1_000;
/** A token is read as a whole number of at most this many digits (2^256 has 78); the store's column holds as many. */
export const MAX_TOKEN_DIGITS = 78;

type TableRow = {
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
function tableQuery(table: string, format: 'leasehold' | 'shedlock', withoutZone: Set<string>): string {
  const t = quoteTable(table);
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

const EXPECTED_COLUMNS = { leasehold: ['name', 'owner', 'expires_at', 'token'], shedlock: ['name', 'lock_until', 'locked_at', 'locked_by'] };
const TIME_COLUMNS = { leasehold: ['expires_at'], shedlock: ['lock_until', 'locked_at'] };
const TIME_TYPES = new Set(['timestamp with time zone', 'timestamp without time zone', 'date']);

/** One table (or pg_locks) cannot be read, for reasons of its own: the source's other parts still can. */
class PartUnreadableError extends SourceUnavailableError {}

/** A bounded text column's exact text (lib/domain/display.ts). */
function exactColumn(text: string, bytes: number | null, digest: string | null): string {
  return digest === null ? exactOf(text) : exactOfHead(Buffer.from(text, 'utf8'), bytes ?? 0, `sha256:${digest.slice(0, 32)}`);
}

/** One row as a lease, judged alone: what cannot be interpreted makes it `unknown`, with the reason. */
function judgeRow(table: string, format: 'leasehold' | 'shedlock', row: TableRow): Observation {
  const key = `${table}/${exactColumn(row.name!, row.name_bytes, row.name_digest)}`;
  const holder = row.holder === null || row.holder === '' ? null : exactColumn(row.holder, row.holder_bytes, row.holder_digest);
  const unknown = (problem: string): Observation => ({ key, kind: 'lock', holder, token: null, ttlMs: null, remainingMs: null, candidates: [], problem });
  let token: bigint | null = null;
  if (row.token !== null) {
    if (!/^-?\d+$/.test(row.token) || row.token.replace('-', '').length > MAX_TOKEN_DIGITS) {
      return unknown(
        row.token.length > MAX_TOKEN_DIGITS
          ? `the token has more than ${MAX_TOKEN_DIGITS} digits: Leasehold reads tokens up to 2^256`
          : `the token column holds "${displayText(row.token, 40)}", not a whole number`,
      );
    }
    token = BigInt(row.token);
  }
  // An expiry of 'infinity' never comes: held until the row changes; '-infinity' is long past.
  const expiry = format === 'leasehold' ? 'expires_at' : 'lock_until';
  let remainingMs = row.remaining_ms === null ? null : Math.round(row.remaining_ms);
  const detail: Record<string, unknown> = {};
  if (row.expiry_infinite === 'infinity') {
    remainingMs = null;
    detail.expiry = `${expiry} is 'infinity': held until the row changes`;
  } else if (row.expiry_infinite === '-infinity') {
    remainingMs = -1;
    detail.expiry = `${expiry} is '-infinity'`;
  } else if (remainingMs === null && holder !== null) {
    return unknown(`${expiry} is NULL: when the lease ends is not known`);
  }
  return {
    key,
    kind: 'lock',
    holder,
    token,
    ttlMs: row.ttl_ms === null ? null : Math.round(row.ttl_ms),
    remainingMs,
    // Leasehold's release sets owner NULL; ShedLock's moves lock_until back to now.
    released: row.holder === null,
    candidates: [],
    ...(Object.keys(detail).length ? { detail } : {}),
  };
}

/**
 * Whether a failed query speaks only for its own table or view (it is missing, has other
 * columns, holds values the query cannot take, was cancelled by the statement timeout while
 * locked), rather than for the connection or the server: then the source's other parts are
 * still read.
 */
function onlyThisPart(error: unknown): boolean {
  if (error instanceof PartUnreadableError) return true;
  if (error instanceof SourceUnavailableError) return false;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^(42|22|2F|39|55|57014|42501)/.test(code) && code.length === 5;
}

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

/** `pool`: read through this pool (the embedded store's PGlite, lib/db/pglite-pool.ts, for a url of pglite://embedded) instead of config.url; close() leaves it open. */
export function createPostgresSource(config: PostgresSourceConfig, defaultPollMs: number, given?: PgPoolLike): LeaseSource {
  const pool: PgPoolLike = given ?? new pg.Pool({
    connectionString: config.url,
    max: 1,
    connectionTimeoutMillis: READ_TIMEOUT_MS,
    statement_timeout: READ_TIMEOUT_MS,
    query_timeout: READ_TIMEOUT_MS + 500,
    // A lease table is read with an ACCESS SHARE lock: waiting a second for it means something
    // holds it exclusively (a migration, a VACUUM FULL). That table is then unread (55P03), and
    // the source's other parts are read within the read's deadline instead of all timing out.
    lock_timeout: LOCK_TIMEOUT_MS,
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
      throw new PartUnreadableError(config.name, `table ${table} (format ${format}) does not exist, or this user cannot see it`);
    }
    const found = new Map(rows.map((r) => [r.column_name, r.data_type]));
    const missing = EXPECTED_COLUMNS[format].filter((column) => !found.has(column));
    if (missing.length > 0) {
      throw new PartUnreadableError(
        config.name,
        `table ${table} is not in the ${format} layout: it has no column ${missing.join(', ')} (expected ${EXPECTED_COLUMNS[format].join(', ')}; found ${[...found.keys()].slice(0, 20).map((c) => displayText(c, 40)).join(', ')})`,
      );
    }
    const untimely = TIME_COLUMNS[format].filter((column) => !TIME_TYPES.has(found.get(column)!));
    if (untimely.length > 0) {
      throw new PartUnreadableError(
        config.name,
        `table ${table} is not in the ${format} layout: ${untimely.map((c) => `${c} is of type ${displayText(found.get(c)!, 40)}`).join(', ')} (expected a timestamp)`,
      );
    }
    const withoutZone = new Set([...found].filter(([, type]) => type === 'timestamp without time zone' || type === 'date').map(([column]) => column));
    layouts.set(table, withoutZone);
    return withoutZone;
  }

  /** The table's leases; `nameless`: rows with a NULL name, which cannot be told apart and are counted instead. */
  async function readTable(client: PgPoolClientLike, table: string, format: 'leasehold' | 'shedlock'): Promise<{ observations: Observation[]; nameless: number }> {
    let rows: TableRow[];
    try {
      rows = (await client.query<TableRow>(tableQuery(table, format, await layoutOf(client, table, format)))).rows;
    } catch (error) {
      layouts.delete(table);
      if (error instanceof SourceUnavailableError) throw error;
      if (onlyThisPart(error)) {
        throw new PartUnreadableError(config.name, `table ${table} (format ${format}): ${redactUrlPassword((error as Error).message)}`, { cause: error });
      }
      throw unavailable(error, `reading table ${table}`);
    }
    const observations: Observation[] = [];
    let nameless = 0;
    for (const row of rows) {
      if (row.name === null) {
        nameless++;
        continue;
      }
      try {
        observations.push(judgeRow(table, format, row));
      } catch (error) {
        // Not expected; if it happens, it costs this row only.
        observations.push(unreadableObservation(`${table}/${exactOf(row.name)}`, `the row could not be read: ${displayText(String((error as Error)?.message ?? error), 120)}`));
      }
    }
    return { observations, nameless };
  }

  async function readAdvisory(client: PgPoolClientLike): Promise<Observation[]> {
    let rows: AdvisoryRow[];
    try {
      rows = (await client.query<AdvisoryRow>(ADVISORY_QUERY)).rows;
    } catch (error) {
      if (onlyThisPart(error)) throw new PartUnreadableError(config.name, `advisory locks (pg_locks): ${redactUrlPassword((error as Error).message)}`, { cause: error });
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
        const unread: UnreadScope[] = [];
        const problems: string[] = [];
        // Each part alone: a table that cannot be read leaves the others (and the advisory
        // locks) readable; a failure of the connection itself fails the read.
        const part = async (prefix: string, read: () => Promise<Observation[]>) => {
          try {
            observations.push(...(await read()));
          } catch (error) {
            if (!(error instanceof PartUnreadableError)) throw error;
            unread.push({ prefix, reason: error.reason });
          }
        };
        for (const { table, format } of config.tables) {
          await part(`${table}/`, async () => {
            const { observations: leases, nameless } = await readTable(client, table, format);
            if (nameless > 0) problems.push(`table ${table}: ${nameless} row${nameless === 1 ? '' : 's'} with a NULL name (not shown: they cannot be told apart)`);
            return leases;
          });
        }
        if (config.advisoryLocks) await part('advisory/', () => readAdvisory(client));
        const parts = config.tables.length + (config.advisoryLocks ? 1 : 0);
        if (parts > 0 && unread.length === parts) throw new SourceUnavailableError(config.name, unread.map((u) => u.reason).join('; '));
        const version = (await client.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version ?? null;
        problems.push(...unread.map((u) => u.reason));
        return { observations, status: { serverVersion: version, ...(problems.length ? { problems } : {}) }, ...(unread.length ? { unread } : {}) };
      }, signal);
    },

    async close() {
      if (!given) await pool.end();
    },
  };
}
