// The AuditEntry table (lib/db owns it: every read and write of it is here). The table is
// append-only (a trigger refuses UPDATE, DELETE and TRUNCATE) and hash-chained: each entry holds
// the hash of the one before it and its own (audit-chain.ts), a trigger refuses an entry whose
// prevHash is not the last entry's hash, and a unique index refuses two entries with one prevHash.
//
// Every statement reads the columns through one list (COLUMNS: ids and tokens as decimal text,
// `at` as ISO text, detail as JSON text), so PostgreSQL, PGlite and Prisma's raw queries give
// the same record, which toAuditRow converts; auditEntryView converts a row to the API's view.
// (COLUMNS names its text id "id": ORDER BY says "AuditEntry".id, or it would sort by the text.)
import { AUDIT_PHASES, AUTH_METHODS, type AuditEntryView, type AuditPhase, type AuthMethod, type JsonValue } from '../domain/audit';
import { AuditInputError, auditHash, storableJson, storableText, storableToken, type AuditContent } from './audit-chain';
import type { SqlSession } from './sql';
import type { Store } from './store';
import { systemClock } from '../time/clock';

export { AuditInputError } from './audit-chain';

/** The migration that made the table a hash chain: before it, there is nothing to verify. */
export const AUDIT_CHAIN_MIGRATION = '20261204100000_audit_chain';

/** One entry as the repository gives it. */
export type AuditRow = AuditContent & { prevHash: string | null; hash: string };

/** What a caller says of an entry; `id`, `at` and the hashes are the repository's. Tokens: bigint or decimal string. */
export type AuditInput = {
  requestId: string;
  phase: AuditPhase;
  /** Required for `refused` (403, 409, 422); any 100-599 otherwise, or none. */
  status?: number | null;
  action: string;
  actor: string;
  actorRole: string;
  authMethod: AuthMethod;
  clientAddress?: string | null;
  leaseId?: string | null;
  reason?: string | null;
  expectedHolder?: string | null;
  expectedToken?: bigint | string | null;
  actualHolder?: string | null;
  actualToken?: bigint | string | null;
  previousToken?: bigint | string | null;
  newToken?: bigint | string | null;
  dryRun?: boolean;
  /** Any JSON value (bigints become decimal strings); stored as jsonb, hashed in canonical form. */
  detail?: unknown;
};

/** A row as every statement reads it (COLUMNS): ids, tokens, `at` and detail as text. */
type AuditRecord = Omit<AuditRow, 'id' | 'at' | 'phase' | 'authMethod' | 'expectedToken' | 'actualToken' | 'previousToken' | 'newToken' | 'detail'> & {
  id: string;
  at: string;
  phase: string;
  authMethod: string;
  expectedToken: string | null;
  actualToken: string | null;
  previousToken: string | null;
  newToken: string | null;
  detail: string | null;
};

const COLUMNS = `id::text AS id, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at, "requestId", phase, status, action,
  actor, "actorRole", "authMethod", "clientAddress", "leaseId", reason, "expectedHolder", "expectedToken"::text AS "expectedToken",
  "actualHolder", "actualToken"::text AS "actualToken", "previousToken"::text AS "previousToken", "newToken"::text AS "newToken",
  "dryRun", detail::text AS detail, "prevHash", hash`;

const bigintOrNull = (value: string | null) => (value === null ? null : BigInt(value));

/** The one converter from what the statements read to a row. */
function toAuditRow(record: AuditRecord): AuditRow {
  return {
    id: BigInt(record.id),
    at: new Date(record.at),
    requestId: record.requestId,
    phase: record.phase as AuditPhase,
    status: record.status === null ? null : Number(record.status),
    action: record.action,
    actor: record.actor,
    actorRole: record.actorRole,
    authMethod: record.authMethod as AuthMethod,
    clientAddress: record.clientAddress,
    leaseId: record.leaseId,
    reason: record.reason,
    expectedHolder: record.expectedHolder,
    expectedToken: bigintOrNull(record.expectedToken),
    actualHolder: record.actualHolder,
    actualToken: bigintOrNull(record.actualToken),
    previousToken: bigintOrNull(record.previousToken),
    newToken: bigintOrNull(record.newToken),
    dryRun: record.dryRun,
    detail: record.detail === null ? null : (JSON.parse(record.detail) as JsonValue),
    prevHash: record.prevHash,
    hash: record.hash,
  };
}

const decimalOrNull = (value: bigint | null) => (value === null ? null : value.toString());

/** The API's view of an entry: ids and tokens as decimal strings, `at` as an ISO string. */
export function auditEntryView(row: AuditRow): AuditEntryView {
  return {
    ...row,
    id: row.id.toString(),
    at: row.at.toISOString(),
    expectedToken: decimalOrNull(row.expectedToken),
    actualToken: decimalOrNull(row.actualToken),
    previousToken: decimalOrNull(row.previousToken),
    newToken: decimalOrNull(row.newToken),
  };
}

// ---------------------------------------------------------------------------- writing

function text(value: string | null | undefined, what: string): string | null {
  return value === null || value === undefined ? null : storableText(value, what);
}

function required(value: string, what: string): string {
  if (typeof value !== 'string' || value === '') throw new AuditInputError(`audit entry: ${what} is required`);
  return storableText(value, what);
}

/** The entry's content with the values the store will give back, checked; id and at come later. */
function contentOf(entry: AuditInput): Omit<AuditContent, 'id' | 'at'> {
  if (!AUDIT_PHASES.includes(entry.phase)) throw new AuditInputError(`audit entry: phase must be one of ${AUDIT_PHASES.join(', ')}, not ${String(entry.phase)}`);
  if (!AUTH_METHODS.includes(entry.authMethod)) throw new AuditInputError(`audit entry: authMethod must be one of ${AUTH_METHODS.join(', ')}, not ${String(entry.authMethod)}`);
  const status = entry.status ?? null;
  if (status !== null && !(Number.isInteger(status) && status >= 100 && status <= 599)) throw new AuditInputError(`audit entry: status must be a whole number from 100 to 599, not ${status}`);
  if (entry.phase === 'refused' && status === null) throw new AuditInputError('audit entry: a refusal needs its status (403, 409, 422)');
  return {
    requestId: required(entry.requestId, 'requestId'),
    phase: entry.phase,
    status,
    action: required(entry.action, 'action'),
    actor: required(entry.actor, 'actor'),
    actorRole: required(entry.actorRole, 'actorRole'),
    authMethod: entry.authMethod,
    clientAddress: text(entry.clientAddress, 'clientAddress'),
    leaseId: text(entry.leaseId, 'leaseId'),
    reason: text(entry.reason, 'reason'),
    expectedHolder: text(entry.expectedHolder, 'expectedHolder'),
    expectedToken: storableToken(entry.expectedToken, 'expectedToken'),
    actualHolder: text(entry.actualHolder, 'actualHolder'),
    actualToken: storableToken(entry.actualToken, 'actualToken'),
    previousToken: storableToken(entry.previousToken, 'previousToken'),
    newToken: storableToken(entry.newToken, 'newToken'),
    dryRun: entry.dryRun ?? false,
    detail: storableJson(entry.detail),
  };
}

/**
 * Appends one entry, in one transaction: the table is locked against other writers (readers
 * are not held up), the last entry's hash read, the id drawn, `at` set here (milliseconds, as
 * timestamptz(3) keeps it), the hash computed and the row inserted. The row the store gives
 * back is hashed again: an entry that would not verify is never written.
 * Fails with AuditInputError for an entry the store cannot keep, or with the store's error.
 */
export async function appendAudit(store: Store, entry: AuditInput): Promise<AuditRow> {
  const content = contentOf(entry);
  return store.transaction(async (sql) => {
    await sql.exec('LOCK TABLE "AuditEntry" IN EXCLUSIVE MODE');
    const [head] = await sql.query<{ id: string; prevHash: string | null }>(
      `SELECT nextval(pg_get_serial_sequence('"AuditEntry"', 'id'))::text AS id,
              (SELECT hash FROM "AuditEntry" ORDER BY id DESC LIMIT 1) AS "prevHash"`,
    );
    const full: AuditContent = { ...content, id: BigInt(head!.id), at: new Date(systemClock.wall()) };
    const prevHash = head!.prevHash;
    const hash = auditHash(prevHash, full);
    const [record] = await sql.query<AuditRecord>(
      `INSERT INTO "AuditEntry" (id, at, "requestId", phase, status, action, actor, "actorRole", "authMethod", "clientAddress", "leaseId",
                                 reason, "expectedHolder", "expectedToken", "actualHolder", "actualToken", "previousToken", "newToken",
                                 "dryRun", detail, "prevHash", hash)
       VALUES ($1::bigint, $2::timestamptz, $3, $4, $5::int, $6, $7, $8, $9, $10, $11, $12, $13, $14::numeric, $15, $16::numeric,
               $17::numeric, $18::numeric, $19::boolean, $20::jsonb, $21, $22)
       RETURNING ${COLUMNS}`,
      [
        full.id.toString(), full.at.toISOString(), full.requestId, full.phase, full.status, full.action, full.actor, full.actorRole, full.authMethod,
        full.clientAddress, full.leaseId, full.reason, full.expectedHolder, decimalOrNull(full.expectedToken), full.actualHolder, decimalOrNull(full.actualToken),
        decimalOrNull(full.previousToken), decimalOrNull(full.newToken), full.dryRun, full.detail === null ? null : JSON.stringify(full.detail), prevHash, hash,
      ],
    );
    const row = toAuditRow(record!);
    if (auditHash(row.prevHash, row) !== hash) throw new AuditInputError('audit entry: the store does not give back the entry as it was hashed; nothing was written');
    return row;
  });
}

// ---------------------------------------------------------------------------- reading

export type AuditFilter = {
  /** From this time on (inclusive). */
  since?: Date;
  /** Before this time (exclusive). */
  until?: Date;
  actor?: string;
  leaseId?: string;
  action?: string;
  phase?: AuditPhase;
  limit: number;
  /** The `next` of the previous page: entries older than it. */
  cursor?: bigint;
};

/** A page of entries matching the filter, newest first, and the cursor of the next page (null on the last). */
export async function listAudit(store: Store, filter: AuditFilter): Promise<{ rows: AuditRow[]; next: string | null }> {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (condition: string, value: unknown) => {
    params.push(value);
    where.push(condition.replace('?', `$${params.length}`));
  };
  if (filter.since) add('at >= ?::timestamptz', filter.since.toISOString());
  if (filter.until) add('at < ?::timestamptz', filter.until.toISOString());
  if (filter.actor !== undefined) add('actor = ?', filter.actor);
  if (filter.leaseId !== undefined) add('"leaseId" = ?', filter.leaseId);
  if (filter.action !== undefined) add('action = ?', filter.action);
  if (filter.phase !== undefined) add('phase = ?', filter.phase);
  if (filter.cursor !== undefined) add('id < ?::bigint', filter.cursor.toString());
  params.push(filter.limit + 1);
  const records = await store.prisma.$queryRawUnsafe<AuditRecord[]>(
    `SELECT ${COLUMNS} FROM "AuditEntry" ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY "AuditEntry".id DESC LIMIT $${params.length}::int`,
    ...params,
  );
  const rows = records.slice(0, filter.limit).map(toAuditRow);
  return { rows, next: records.length > filter.limit ? rows.at(-1)!.id.toString() : null };
}

export type AuditChainReport = {
  ok: boolean;
  /** Entries found intact: all of them when ok, those before the first broken one otherwise. */
  checked: number;
  /** The first entry that does not verify, and why. */
  firstBroken?: { id: string; reason: string };
  /** The last entry checked: record its hash elsewhere to notice later that entries were cut off the end. */
  head?: { id: string; hash: string };
};

/**
 * Walks every entry in id order, `batch` at a time, recomputing each hash and checking that
 * each prevHash is the hash of the entry before it. Stops at the first entry that does not verify.
 */
export async function verifyAuditChain(store: Store, options: { batch?: number } = {}): Promise<AuditChainReport> {
  const batch = options.batch ?? 1_000;
  if (!Number.isSafeInteger(batch) || batch < 1) throw new RangeError(`batch must be a whole number of at least 1, not ${batch}`);
  return store.withSql((sql) => walkChain(sql, batch));
}

async function walkChain(sql: SqlSession, batch: number): Promise<AuditChainReport> {
  let checked = 0;
  let previous: AuditRow | null = null;
  for (;;) {
    const records = await sql.query<AuditRecord>(`SELECT ${COLUMNS} FROM "AuditEntry" WHERE id > $1::bigint ORDER BY "AuditEntry".id LIMIT $2::int`, [
      previous ? previous.id.toString() : '-9223372036854775808',
      batch,
    ]);
    for (const record of records) {
      const row = toAuditRow(record);
      const reason = brokenLink(previous, row) ?? (auditHash(row.prevHash, row) === row.hash ? null : 'its content does not match its hash: it was changed after it was written');
      if (reason) return { ok: false, checked, firstBroken: { id: row.id.toString(), reason }, ...head(previous) };
      checked += 1;
      previous = row;
    }
    if (records.length < batch) return { ok: true, checked, ...head(previous) };
  }
}

function brokenLink(previous: AuditRow | null, row: AuditRow): string | null {
  if (previous === null) return row.prevHash === null ? null : 'it is the first entry but names a previous hash: entries before it are missing';
  if (row.prevHash === previous.hash) return null;
  return `its prevHash is not the hash of entry ${previous.id}, the entry before it: an entry between them is missing, or entry ${previous.id} was rewritten with a new hash`;
}

const head = (row: AuditRow | null) => (row ? { head: { id: row.id.toString(), hash: row.hash } } : {});
