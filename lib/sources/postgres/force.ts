// Guarded actions on a PostgreSQL source (the contract: ../force.ts; the SQL: force-sql.ts).
//
//   leasehold table  fenced: one UPDATE compares owner, token and expiry and raises the token
//   shedlock table   unfenced: force-release only, one UPDATE moving lock_until to now
//   advisory lock    unfenced, session-bound: force-release ends the holding session
//                    (pg_terminate_backend) in one statement that checks pg_locks; no
//                    quarantine (nothing but a session can hold an advisory lock)
//
// The connection is the adapter's (connection.ts: one connection, statement and lock
// timeouts), and a table's layout is checked as the adapter checks it (tables.ts).
import type { PostgresSourceConfig } from './config';
import type { PgPoolClientLike, PgPoolLike } from '../../db/pg-like';
import { SourceUnavailableError } from '../errors';
import { exactOf } from '../exact';
import {
  bytesOfExact,
  ForceConflictError,
  ForceNotPossibleError,
  isExpected,
  postgresText,
  QUARANTINE_HOLDER,
  type CheckedRequest,
  type CurrentState,
  type ForceDone,
  type ForcePlan,
} from '../force';
import { sessionName } from './advisory';
import { openPool, withClient, type PostgresSourceState } from './connection';
import {
  ADVISORY_HOLDERS,
  advisoryLockOf,
  currentRowStatement,
  leaseTableStatement,
  shedlockStatement,
  terminateStatement,
  type AdvisoryHolderRow,
  type ForcedRow,
} from './force-sql';
import { unavailable } from './part-errors';
import { layoutOf } from './tables';
import { redactUrlsIn, scrub, secretsOf } from '../../redact';

type TableTarget = { kind: 'table'; table: string; format: 'leasehold' | 'shedlock'; name: string | null };
type AdvisoryTarget = { kind: 'advisory'; lock: NonNullable<ReturnType<typeof advisoryLockOf>> };
type Target = TableTarget | AdvisoryTarget;

/** Which configured part a key names: `<table>/<row name>` or `advisory/<lock key>`, as the adapter reports them. */
function targetOf(config: PostgresSourceConfig, key: string): Target {
  if (config.advisoryLocks && key.startsWith('advisory/')) {
    const lock = advisoryLockOf(key.slice('advisory/'.length));
    if (lock) return { kind: 'advisory', lock };
  }
  for (const { table, format } of config.tables) {
    if (!key.startsWith(`${table}/`)) continue;
    // A name no text column can hold (invalid UTF-8, NUL) names no row: the UPDATE finds none.
    return { kind: 'table', table, format, name: postgresText(bytesOfExact(key.slice(table.length + 1), 'row name')) };
  }
  throw new ForceNotPossibleError('not_found', `no table or advisory lock of source ${config.name} is reported under this key (expected "<table>/<name>" for a configured table, or "advisory/<key>")`);
}

const stateOfRow = (row: Pick<ForcedRow, 'found' | 'holder' | 'token' | 'live'> | undefined): CurrentState | null =>
  row?.found ? { holder: row.live && row.holder !== null && row.holder !== '' ? exactOf(row.holder) : null, token: row.token } : null;

/** The statement and parameters of a table action; ForceNotPossibleError where the layout cannot do it. */
async function tableAction(state: PostgresSourceState, client: PgPoolClientLike, target: TableTarget, request: CheckedRequest) {
  if (target.format === 'shedlock' && request.row.fencedOnly) {
    throw new ForceNotPossibleError('unfenced', `${target.table} is a ShedLock table: its locks have no fencing token, so they can only be force-released`);
  }
  const withoutZone = await layoutOf(state, client, target.table, target.format);
  const quarantine = request.quarantineMs !== undefined;
  const text = target.format === 'leasehold' ? leaseTableStatement(target.table, withoutZone, request.row, quarantine) : shedlockStatement(target.table, withoutZone, quarantine);
  // The holder as the adapter showed it (exact text) back to the column's text; one no
  // column can hold matches no row.
  const holder = postgresText(bytesOfExact(request.expectedHolder, 'holder'));
  const params: (string | number | null)[] = [target.name, holder, request.expectedToken, request.quarantineMs ?? 0];
  if (quarantine) params.push(QUARANTINE_HOLDER);
  return { text, params, withoutZone };
}

const display = (value: string | number | null) => (value === null ? 'NULL' : String(value));

async function planTable(state: PostgresSourceState, client: PgPoolClientLike, target: TableTarget, request: CheckedRequest): Promise<ForcePlan> {
  const { text, params } = await tableAction(state, client, target, request);
  const fenced = target.format === 'leasehold';
  const what = fenced
    ? `compare owner, token and expiry, raise the token by one and ${request.quarantineMs ? `hold the row for ${QUARANTINE_HOLDER} for ${request.quarantineMs} ms` : request.row.clearsHolder ? 'clear the owner' : 'expire it now'}, in one UPDATE`
    : `compare locked_by and expiry and move lock_until to ${request.quarantineMs ? `now + ${request.quarantineMs} ms under ${QUARANTINE_HOLDER}` : 'now'}, in one UPDATE (the row is kept)`;
  return { layout: `${target.format} table`, fenced, steps: [{ what, statement: text, args: params.map(display) }], detail: { table: target.table } };
}

async function executeTable(state: PostgresSourceState, client: PgPoolClientLike, target: TableTarget, request: CheckedRequest): Promise<ForceDone> {
  const { text, params, withoutZone } = await tableAction(state, client, target, request);
  const row = (await client.query<ForcedRow>(text, params)).rows[0];
  if (row?.done) {
    return {
      previousToken: row.previous_token,
      newToken: row.new_token,
      detail: { table: target.table, ...(request.quarantineMs ? { quarantinedForMs: request.quarantineMs, quarantineHolder: QUARANTINE_HOLDER } : {}) },
    };
  }
  let current = stateOfRow(row);
  // The statement's snapshot showed the expected state, yet its UPDATE, which waits for a
  // concurrent writer and then re-checks the newest row, did not match: the row changed
  // while it ran. Say what it is now.
  if (isExpected(request, current)) current = stateOfRow((await client.query<ForcedRow>(currentRowStatement(target.table, target.format, withoutZone), [target.name])).rows[0]);
  throw new ForceConflictError(request.key, current);
}

/** The sessions holding the lock, and the one the request names (by the holder text the adapter shows). */
async function advisoryHolders(client: PgPoolClientLike, target: AdvisoryTarget, request: CheckedRequest) {
  const { classid, objid, objsubid } = target.lock;
  const rows = (await client.query<AdvisoryHolderRow>(ADVISORY_HOLDERS, [classid, objid, objsubid])).rows;
  const session = rows.find((row) => sessionName(row) === request.expectedHolder) ?? null;
  const current: CurrentState | null = rows[0] ? { holder: sessionName(rows[0]), token: null } : null;
  return { session, current, version: rows[0]?.version ?? 0 };
}

function checkAdvisory(request: CheckedRequest) {
  if (request.row.fencedOnly) throw new ForceNotPossibleError('unfenced', 'an advisory lock has no fencing token: it can only be force-released, by ending the session that holds it');
  if (request.quarantineMs !== undefined) {
    throw new ForceNotPossibleError('not_supported', 'an advisory lock cannot be quarantined: only a database session can hold one, and Leasehold keeps none open for it');
  }
}

const terminateArgs = (target: AdvisoryTarget, s: AdvisoryHolderRow) => [target.lock.classid, target.lock.objid, target.lock.objsubid, String(s.pid), s.backend_start, s.application_name, s.client_addr];
const sessionDetail = (s: AdvisoryHolderRow) => ({ pid: s.pid, applicationName: s.application_name, clientAddr: s.client_addr, backendStart: s.backend_start });

async function planAdvisory(client: PgPoolClientLike, target: AdvisoryTarget, request: CheckedRequest): Promise<ForcePlan> {
  checkAdvisory(request);
  const { session, current, version } = await advisoryHolders(client, target, request);
  const step = {
    what: 'end the session holding the lock (pg_terminate_backend), only if that very session still holds it; its open transaction is rolled back',
    statement: terminateStatement(version),
    args: session ? terminateArgs(target, session).map(display) : [target.lock.classid, target.lock.objid, target.lock.objsubid, '(no session matches the holder you saw)'],
  };
  return { layout: 'advisory lock', fenced: false, steps: [step], detail: session ? { session: sessionDetail(session), matchesNow: true } : { matchesNow: false, current } };
}

async function executeAdvisory(client: PgPoolClientLike, target: AdvisoryTarget, request: CheckedRequest): Promise<ForceDone> {
  checkAdvisory(request);
  const { session, current, version } = await advisoryHolders(client, target, request);
  // An advisory lock has no token: one who saw a token saw something else.
  if (!session || request.expectedToken !== null) throw new ForceConflictError(request.key, current);
  const rows = (await client.query<{ terminated: boolean }>(terminateStatement(version), terminateArgs(target, session))).rows;
  // No row: between the read and the statement the session let go of the lock or ended.
  if (rows.length === 0) throw new ForceConflictError(request.key, (await advisoryHolders(client, target, request)).current);
  return { previousToken: null, newToken: null, detail: { terminated: sessionDetail(session), exited: rows[0]!.terminated } };
}

/** SQLSTATE classes of a statement refused as it stands: data (22), integrity (23), a read-only transaction (25), access or syntax (42), not supported (0A). */
const REFUSED_SQLSTATE = /^(?:22|23|25|42|0A)[0-9A-Z]{3}$/;

/** The guarded actions of a PostgreSQL source; `given`: use this pool (the embedded store's) instead of opening one. */
export function createPostgresForce(config: PostgresSourceConfig, given?: PgPoolLike) {
  const pool: PgPoolLike = given ?? openPool(config);
  pool.on('error', () => {});
  const state: PostgresSourceState = { config, pool, layouts: new Map() };
  // A conflict or a refusal comes out of withClient as a value: thrown through it, it would
  // cost the connection (withClient discards one after any failure).
  const run = async <T>(signal: AbortSignal, work: (client: PgPoolClientLike) => Promise<T>): Promise<T> => {
    const outcome = await withClient(
      state,
      async (client): Promise<{ value: T } | { refused: Error }> => {
        try {
          return { value: await work(client) };
        } catch (error) {
          if (error instanceof ForceConflictError || error instanceof ForceNotPossibleError) return { refused: error };
          if (error instanceof SourceUnavailableError) throw error;
          // The server refused the one statement (no privilege, a read-only session, a column of
          // another type...): it failed whole, so nothing was applied. A connection or server
          // failure stays "not known".
          const code = (error as { code?: unknown }).code;
          if (typeof code === 'string' && REFUSED_SQLSTATE.test(code)) {
            const reason = scrub(redactUrlsIn(String((error as Error).message)), secretsOf(config)).slice(0, 300);
            return { refused: new ForceNotPossibleError('backend_refused', `${config.name}: PostgreSQL refused the statement (SQLSTATE ${code}: ${reason}); nothing was applied`) };
          }
          throw unavailable(config.name, error, 'forcing');
        }
      },
      signal,
    );
    if ('refused' in outcome) throw outcome.refused;
    return outcome.value;
  };
  return {
    async plan(request: CheckedRequest, signal: AbortSignal): Promise<ForcePlan> {
      const target = targetOf(config, request.key);
      return run(signal, (client) => (target.kind === 'advisory' ? planAdvisory(client, target, request) : planTable(state, client, target, request)));
    },
    async execute(request: CheckedRequest, signal: AbortSignal): Promise<ForceDone> {
      const target = targetOf(config, request.key);
      return run(signal, (client) => (target.kind === 'advisory' ? executeAdvisory(client, target, request) : executeTable(state, client, target, request)));
    },
    async close() {
      if (!given) await pool.end();
    },
  };
}
