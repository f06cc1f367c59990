// The SQL of each lease table the collector writes (observer-writes.ts runs them in one
// transaction; change-write.ts puts those of a batch of state changes in one statement, hence
// the builders taking Params). Rows are passed as one JSON parameter and unpacked with
// jsonb_to_recordset: the same SQL runs on PostgreSQL and on the embedded PGlite, whatever the
// batch size.
import { isFenced } from '../domain/lease-view';
import type { TrackedLease } from '../domain/tracked-lease';
import type { SqlSession } from './sql';
import { StaleOwnerError, type SourceWrite, type WriteBatch, type WrittenEvent } from './observer-batch';

/** How values become the JSON rows the SQL unpacks. */
export const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
export const text = (value: bigint | null) => (value === null ? null : value.toString());
const bigintsAsText = (_key: string, v: unknown) => (typeof v === 'bigint' ? v.toString() : v);
/**
 * JSON text of rows whose bigints are already text; a BigInt left in a detail is written as
 * text too. A replacer on every value cost 1.7 s of a 20 s run at 100,000 leases, so it is
 * only used when the plain form fails on one.
 */
export const json = (value: unknown) => {
  try {
    return JSON.stringify(value);
  } catch (error) {
    if (error instanceof TypeError) return JSON.stringify(value, bigintsAsText);
    throw error;
  }
};

/** The parameters of a statement being built: `add` gives each value its placeholder. */
export class Params {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/** The source a batch without the source's row fences on, or null when it writes unfenced (no ownership token: the embedded store). */
export function fencedSource(batch: WriteBatch): string | null {
  const name = batch.collector.source ?? batch.dirty[0]?.source ?? batch.renewals[0]?.lease.source;
  return !name || batch.collector.token === 0n ? null : name;
}

/** A row if `name`'s source row still carries this collector's token. */
export function ownershipSql(p: Params, name: string, token: bigint): string {
  return `SELECT 1 FROM "Source" WHERE name = ${p.add(name)} AND "collectorToken" = ${p.add(token.toString())}::bigint`;
}

export async function checkOwnership(sql: SqlSession, batch: WriteBatch) {
  const name = fencedSource(batch);
  if (name === null) return;
  // A batch without the source's row (renewals) checks that the row still names this
  // observer's ownership token, without locking anything: a lock here would hold up the
  // ownership lease's renewal (or the other write queue) for as long as a large batch takes.
  // A new owner takes the row over with its first write; a renewal batch that raced with
  // that write adds true renewals and no events, and the version guard keeps the newer rows.
  const p = new Params();
  const rows = await sql.query(ownershipSql(p, name, batch.collector.token), p.values);
  if (rows.length === 0) throw new StaleOwnerError(name);
}

/** Writes the source's row if this collector's token is not older than the row's; returns its name (no row: refused). */
export function sourceUpsertSql(p: Params, source: SourceWrite, batch: WriteBatch): string {
  const { collector } = batch;
  const lastSeq = batch.sourceEvents.reduce((max, e) => Math.max(max, e.seq), 0);
  const v = [source.name, source.backend, source.status, iso(source.lastGoodReadAt), source.lastError, source.lastPollMs, source.pollMs, source.detail === null ? null : json(source.detail), collector.id, collector.token.toString(), lastSeq].map((value) => p.add(value));
  return `INSERT INTO "Source" (name, backend, status, "lastGoodReadAt", "lastError", "lastPollMs", "pollMs", detail, "collectorId", "collectorToken", "lastSeq", "updatedAt")
     VALUES (${v[0]}, ${v[1]}, ${v[2]}::"SourceStatus", ${v[3]}::timestamptz, ${v[4]}, ${v[5]}, ${v[6]}, ${v[7]}::jsonb, ${v[8]}, ${v[9]}::bigint, ${v[10]}, now())
     ON CONFLICT (name) DO UPDATE SET
       backend = EXCLUDED.backend,
       status = EXCLUDED.status,
       "lastGoodReadAt" = COALESCE(EXCLUDED."lastGoodReadAt", "Source"."lastGoodReadAt"),
       "lastError" = EXCLUDED."lastError",
       "lastPollMs" = COALESCE(EXCLUDED."lastPollMs", "Source"."lastPollMs"),
       "pollMs" = EXCLUDED."pollMs",
       detail = COALESCE(EXCLUDED.detail, "Source".detail),
       "collectorId" = EXCLUDED."collectorId",
       "collectorToken" = EXCLUDED."collectorToken",
       "lastSeq" = GREATEST("Source"."lastSeq", EXCLUDED."lastSeq"),
       "updatedAt" = now()
     WHERE "Source"."collectorToken" IS NULL OR "Source"."collectorToken" <= EXCLUDED."collectorToken"
     RETURNING name`;
}

export async function upsertSource(sql: SqlSession, source: SourceWrite, batch: WriteBatch) {
  const p = new Params();
  const rows = await sql.query(sourceUpsertSql(p, source, batch), p.values);
  if (rows.length === 0) throw new StaleOwnerError(source.name);
}

/** A tracked lease as the JSON row upsertLeases unpacks (one per column). */
export function leaseRowOf(l: TrackedLease) {
  return {
    id: l.id,
    sourceName: l.source,
    backend: l.backend,
    kind: l.kind,
    key: l.key,
    state: l.state,
    holder: l.holder,
    token: text(l.token),
    lastHolder: l.lastHolder,
    lastToken: text(l.lastToken),
    fenced: isFenced(l), // not read back: views apply the rule themselves (lib/domain/lease-view.ts)
    ttlMs: l.ttlMs === null ? null : Math.round(l.ttlMs),
    acquiredAt: iso(l.acquiredAtWall),
    renewedAt: iso(l.renewedAtWall),
    expiresAt: iso(l.expiresAtWall),
    observedAt: iso(l.observedAtWall),
    stale: l.stale,
    candidates: l.candidates.map((c) => ({ holder: c.holder, token: text(c.token) })),
    transitions: l.transitions,
    lastSeq: l.eventSeq,
    renewalSeq: String(l.renewalSeq),
    endedAt: iso(l.ended?.atWall ?? null),
    endedCause: l.ended?.cause ?? null,
    problem: l.problem,
    detail: l.detail,
    version: String(l.version),
    lastIntervalMs: l.lastRenewal ? Math.round(l.lastRenewal.intervalMs) : null,
    lastMarginMs: l.lastRenewal ? Math.round(l.lastRenewal.marginMs) : null,
  };
}

/**
 * Writes leases whole (every column), unless the row holds a newer version. `gate`: a WHERE on
 * the rows read (a statement that writes only when its source is still owned).
 */
export function leaseUpsertSql(p: Params, leases: readonly TrackedLease[], gate = ''): string {
  return `INSERT INTO "Lease" (id, "sourceName", backend, kind, key, state, holder, token, "lastHolder", "lastToken", fenced, "ttlMs",
                          "acquiredAt", "renewedAt", "expiresAt", "observedAt", stale, candidates, transitions, "lastSeq", "renewalSeq",
                          "endedAt", "endedCause", problem, detail, version, "lastIntervalMs", "lastMarginMs", "updatedAt")
     SELECT id, "sourceName", backend, kind, key, state, holder, token::numeric, "lastHolder", "lastToken"::numeric, fenced, "ttlMs",
            "acquiredAt"::timestamptz, "renewedAt"::timestamptz, "expiresAt"::timestamptz, "observedAt"::timestamptz, stale,
            COALESCE(candidates, '[]'::jsonb), transitions, "lastSeq", "renewalSeq"::bigint, "endedAt"::timestamptz, "endedCause", problem, detail,
            version::bigint, "lastIntervalMs", "lastMarginMs", now()
       FROM jsonb_to_recordset(${p.add(json(leases.map(leaseRowOf)))}::jsonb) AS x(id text, "sourceName" text, backend text, kind text, key text, state text, holder text,
            token text, "lastHolder" text, "lastToken" text, fenced boolean, "ttlMs" int8, "acquiredAt" text, "renewedAt" text,
            "expiresAt" text, "observedAt" text, stale boolean, candidates jsonb, transitions int, "lastSeq" int, "renewalSeq" text,
            "endedAt" text, "endedCause" text, problem text, detail jsonb, version text,
            "lastIntervalMs" int8, "lastMarginMs" int8)
     ${gate}
     -- Rows are locked in one order by every statement that writes many leases (this and the
     -- renewals' UPDATE): two write queues of a source never wait on each other in a cycle.
     ORDER BY x.id COLLATE "C"
     ON CONFLICT (id) DO UPDATE SET
       kind = EXCLUDED.kind, state = EXCLUDED.state, holder = EXCLUDED.holder, token = EXCLUDED.token,
       "lastHolder" = EXCLUDED."lastHolder", "lastToken" = EXCLUDED."lastToken", fenced = EXCLUDED.fenced, "ttlMs" = EXCLUDED."ttlMs",
       "acquiredAt" = EXCLUDED."acquiredAt", "renewedAt" = EXCLUDED."renewedAt", "expiresAt" = EXCLUDED."expiresAt",
       "observedAt" = EXCLUDED."observedAt", stale = EXCLUDED.stale, candidates = EXCLUDED.candidates,
       transitions = EXCLUDED.transitions, "lastSeq" = GREATEST("Lease"."lastSeq", EXCLUDED."lastSeq"),
       "renewalSeq" = GREATEST("Lease"."renewalSeq", EXCLUDED."renewalSeq"), "endedAt" = EXCLUDED."endedAt",
       "endedCause" = EXCLUDED."endedCause", problem = EXCLUDED.problem, detail = EXCLUDED.detail, version = EXCLUDED.version,
       "lastIntervalMs" = EXCLUDED."lastIntervalMs", "lastMarginMs" = EXCLUDED."lastMarginMs", "updatedAt" = now()
     -- Renewals and state changes are written by two queues: an older picture never wins.
     WHERE "Lease".version <= EXCLUDED.version`;
}

export async function upsertLeases(sql: SqlSession, batch: WriteBatch) {
  const p = new Params();
  await sql.query(leaseUpsertSql(p, batch.dirty), p.values);
}

/**
 * The lease rows of a renewal batch: what a renewal moves (its times, sequence and figures, and
 * the version), not the other twenty columns it leaves as they were: at 10,000 renewals a
 * second this is most of what the store writes. Older news never wins (the version), and a
 * lease whose row is missing (never written, or refused) is written whole by upsertLeases.
 */
export async function updateRenewedLeases(sql: SqlSession, batch: WriteBatch) {
  const rows = batch.dirty.map((l) => ({
    id: l.id,
    renewedAt: iso(l.renewedAtWall),
    expiresAt: iso(l.expiresAtWall),
    observedAt: iso(l.observedAtWall),
    renewalSeq: String(l.renewalSeq),
    version: String(l.version),
    lastIntervalMs: l.lastRenewal ? Math.round(l.lastRenewal.intervalMs) : null,
    lastMarginMs: l.lastRenewal ? Math.round(l.lastRenewal.marginMs) : null,
  }));
  const missing = await sql.query<{ id: string }>(
    `WITH x AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(id text, "renewedAt" text, "expiresAt" text, "observedAt" text,
                  "renewalSeq" text, version text, "lastIntervalMs" int8, "lastMarginMs" int8)),
          -- The rows are locked in the order leaseUpsertSql writes them, whatever join the UPDATE
          -- below runs: the state changes' queue and this one never wait on each other in a cycle.
          locked AS MATERIALIZED (SELECT l.id FROM "Lease" l WHERE l.id IN (SELECT id FROM x) ORDER BY l.id COLLATE "C" FOR NO KEY UPDATE),
          updated AS (
            UPDATE "Lease" AS l SET "renewedAt" = x."renewedAt"::timestamptz, "expiresAt" = x."expiresAt"::timestamptz,
                   "observedAt" = x."observedAt"::timestamptz, "renewalSeq" = GREATEST(l."renewalSeq", x."renewalSeq"::bigint),
                   version = x.version::bigint, "lastIntervalMs" = x."lastIntervalMs", "lastMarginMs" = x."lastMarginMs", "updatedAt" = now()
              FROM x WHERE l.id = x.id AND l.id IN (SELECT id FROM locked) AND l.version <= x.version::bigint
            RETURNING l.id)
     -- The UPDATE runs whatever this reads (PostgreSQL runs a WITH that writes exactly once).
     -- Read: the leases without a row (a row left alone is newer news, kept).
     SELECT x.id FROM x WHERE NOT EXISTS (SELECT 1 FROM "Lease" l WHERE l.id = x.id)`,
    [json(rows)],
  );
  if (missing.length === 0) return;
  const ids = new Set(missing.map((row) => row.id));
  await upsertLeases(sql, { ...batch, dirty: batch.dirty.filter((l) => ids.has(l.id)) });
}

/** Inserts a batch's lease events (a retried one is not inserted twice), returning those inserted. `gate` as for leaseUpsertSql. */
export function eventInsertSql(p: Params, batch: WriteBatch, gate = ''): string {
  const rows = batch.events.map(({ lease, seq, change }) => ({
    leaseId: lease.id,
    seq,
    type: change.type,
    at: iso(change.atWall),
    holder: change.holder,
    previousHolder: change.previousHolder,
    token: text(change.token),
    previousToken: text(change.previousToken),
    gapMs: change.gapMs,
    detail: change.detail,
  }));
  return `INSERT INTO "LeaseEvent" ("leaseId", seq, type, at, holder, "previousHolder", token, "previousToken", "gapMs", detail)
     SELECT "leaseId", seq, type, at::timestamptz, holder, "previousHolder", token::numeric, "previousToken"::numeric, "gapMs", detail
       FROM jsonb_to_recordset(${p.add(json(rows))}::jsonb) AS x("leaseId" text, seq int, type text, at text, holder text, "previousHolder" text,
            token text, "previousToken" text, "gapMs" int8, detail jsonb)
     ${gate}
     ON CONFLICT ("leaseId", seq, at) DO NOTHING
     RETURNING id::text AS id, "leaseId", seq`;
}

export async function insertEvents(sql: SqlSession, batch: WriteBatch): Promise<WrittenEvent[]> {
  const p = new Params();
  return sql.query<WrittenEvent>(eventInsertSql(p, batch), p.values);
}

export async function upsertRenewals(sql: SqlSession, batch: WriteBatch) {
  const rows = batch.renewals.map(({ lease, seq, renewal }) => ({
    leaseId: lease.id,
    slot: seq % batch.ringSize,
    seq: String(seq),
    at: iso(renewal.atWall),
    holder: renewal.holder,
    intervalMs: renewal.intervalMs,
    marginMs: renewal.marginMs,
    ttlMs: renewal.ttlMs === null ? null : Math.round(renewal.ttlMs),
  }));
  await sql.query(
    `INSERT INTO "RenewalSample" ("leaseId", slot, seq, at, holder, "intervalMs", "marginMs", "ttlMs")
     SELECT "leaseId", slot, seq::bigint, at::timestamptz, holder, "intervalMs", "marginMs", "ttlMs"
       FROM jsonb_to_recordset($1::jsonb) AS x("leaseId" text, slot int, seq text, at text, holder text, "intervalMs" int8, "marginMs" int8, "ttlMs" int8)
     ON CONFLICT ("leaseId", slot) DO UPDATE SET seq = EXCLUDED.seq, at = EXCLUDED.at, holder = EXCLUDED.holder,
       "intervalMs" = EXCLUDED."intervalMs", "marginMs" = EXCLUDED."marginMs", "ttlMs" = EXCLUDED."ttlMs"
     WHERE "RenewalSample".seq < EXCLUDED.seq`,
    [json(rows)],
  );
}

export async function upsertRollups(sql: SqlSession, batch: WriteBatch) {
  const rows = batch.rollups.map(({ leaseId, minute, stats }) => ({ leaseId, minute: iso(minute), ...stats }));
  await sql.query(
    `INSERT INTO "RenewalRollup" ("leaseId", minute, count, "intervalMin", "intervalP50", "intervalP99", "intervalMax",
                                  "marginMin", "marginP50", "marginP99", "marginMax")
     SELECT "leaseId", minute::timestamptz, count, "intervalMin", "intervalP50", "intervalP99", "intervalMax",
            "marginMin", "marginP50", "marginP99", "marginMax"
       FROM jsonb_to_recordset($1::jsonb) AS x("leaseId" text, minute text, count int, "intervalMin" int8, "intervalP50" int8,
            "intervalP99" int8, "intervalMax" int8, "marginMin" int8, "marginP50" int8, "marginP99" int8, "marginMax" int8)
     ON CONFLICT ("leaseId", minute) DO UPDATE SET count = EXCLUDED.count,
       "intervalMin" = EXCLUDED."intervalMin", "intervalP50" = EXCLUDED."intervalP50", "intervalP99" = EXCLUDED."intervalP99",
       "intervalMax" = EXCLUDED."intervalMax", "marginMin" = EXCLUDED."marginMin", "marginP50" = EXCLUDED."marginP50",
       "marginP99" = EXCLUDED."marginP99", "marginMax" = EXCLUDED."marginMax"`,
    [json(rows)],
  );
}

