// Writes what the collector saw to the store: one transaction per read of a source.
//
// - Every event carries its per-lease sequence number (source events: per source), and
//   inserting is ON CONFLICT DO NOTHING, so retrying a batch never duplicates an event.
// - The source row carries the fencing token of the collector's ownership lease; a write
//   with a lower token than the last one is refused (StaleOwnerError): a collector that was
//   paused and lost the source cannot overwrite its successor's history.
// - Rows are passed as one JSON parameter and unpacked with jsonb_to_recordset: the same SQL
//   runs on PostgreSQL and on the embedded PGlite, whatever the batch size.
import type { Store } from '../db';
import type { SqlSession } from '../db/sql';
import type { LeaseChange, Renewal, TrackedLease } from '../domain/observe';
import type { RenewalRollup } from '../domain/renewal-stats';
import type { Backend } from '../domain/types';

export class StaleOwnerError extends Error {
  constructor(readonly source: string) {
    super(`source ${source} has a newer owner (another collector, or this one again after it lost its ownership lease): this observer stops writing it`);
    this.name = 'StaleOwnerError';
  }
}

export type SourceRow = {
  name: string;
  backend: Backend;
  status: 'up' | 'down';
  lastGoodReadAt: number | null;
  lastError: string | null;
  lastPollMs: number | null;
  pollMs: number;
  detail: Record<string, unknown> | null;
};

export type WriteBatch = {
  /** The source's row; null for a batch that only adds to leases (renewals), which leaves it as it is. */
  source: SourceRow | null;
  /** The collector, and the fencing token of its ownership of the source. */
  collector: { id: string; token: bigint };
  dirty: TrackedLease[];
  events: { lease: TrackedLease; seq: number; change: LeaseChange }[];
  sourceEvents: { seq: number; type: 'source_down' | 'source_up'; atWall: number; detail: Record<string, unknown> | null }[];
  renewals: { lease: TrackedLease; seq: number; renewal: Renewal }[];
  rollups: { leaseId: string; minute: number; stats: RenewalRollup }[];
  /** Mark every lease of the source stale (source down) or not stale (source back). */
  setStale?: boolean;
  ringSize: number;
};

export type WrittenEvent = { id: string; leaseId: string; seq: number };

/** A lease the store would not take as it was, and why (the store's own words). */
export type RefusedLease = { leaseId: string; reason: string };

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const text = (value: bigint | null) => (value === null ? null : value.toString());
const json = (value: unknown) => JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? v.toString() : v));

/**
 * Whether the store refused a write for what was in it (PostgreSQL's SQLSTATE classes 22 data
 * exception, 23 integrity constraint, 54 program limit, P0 raised by a trigger or function),
 * rather than for being out of reach, busy or out of space: only such a refusal is one lease's
 * problem. Anything else (a lost connection, a deadlock, a full disk, a timeout) is the
 * store's, and the batch is retried whole.
 */
export function isRefusedForContent(error: unknown): boolean {
  for (let e = error, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^(22|23|54|P0)[0-9A-Z]{3}$/.test(code)) return true;
  }
  return false;
}

/**
 * Writes a batch. When the store refuses it for what is in it rather than for being out of
 * reach (isRefusedForContent), one lease must not hold up the others: the source's row is
 * written alone, then each lease with its events and renewals alone, and a lease the store
 * refuses is written as `unknown` with the store's reason (or, if even that is refused, left
 * as it was). Any other failure, of the whole batch or of one lease on its own, is the
 * store's: it is thrown, for the caller to retry the batch (every write in it is idempotent).
 */
export async function writeBatchSalvaging(store: Store, batch: WriteBatch): Promise<{ written: WrittenEvent[]; refused: RefusedLease[] }> {
  let first: unknown;
  try {
    return { written: await writeBatch(store, batch), refused: [] };
  } catch (error) {
    if (error instanceof StaleOwnerError || !isRefusedForContent(error)) throw error;
    first = error;
  }
  if (batch.source) {
    try {
      await writeBatch(store, { ...batch, dirty: [], events: [], renewals: [], rollups: [] });
    } catch {
      throw first;
    }
  }
  const written: WrittenEvent[] = [];
  const refused: RefusedLease[] = [];
  const of = <T>(items: T[], id: (item: T) => string, leaseId: string) => items.filter((item) => id(item) === leaseId);
  const leaseIds = new Set([...batch.dirty.map((l) => l.id), ...batch.events.map((e) => e.lease.id), ...batch.renewals.map((r) => r.lease.id), ...batch.rollups.map((r) => r.leaseId)]);
  for (const leaseId of leaseIds) {
    const alone: WriteBatch = {
      ...batch,
      source: null,
      sourceEvents: [],
      setStale: undefined,
      dirty: of(batch.dirty, (l) => l.id, leaseId),
      events: of(batch.events, (e) => e.lease.id, leaseId),
      renewals: of(batch.renewals, (r) => r.lease.id, leaseId),
      rollups: of(batch.rollups, (r) => r.leaseId, leaseId),
    };
    try {
      written.push(...(await writeBatch(store, alone)));
    } catch (error) {
      if (error instanceof StaleOwnerError || !isRefusedForContent(error)) throw error;
      const reason = String((error as Error)?.message ?? error).slice(0, 300);
      refused.push({ leaseId, reason });
      const lease = alone.dirty[0];
      if (!lease) continue;
      const unknown: TrackedLease = {
        ...lease,
        state: 'unknown',
        problem: `Leasehold could not store what it saw of this lease: ${reason}`,
        candidates: [],
        detail: null,
        ttlMs: null,
        token: null,
        lastToken: null,
      };
      await writeBatch(store, { ...alone, dirty: [unknown], events: [], renewals: [], rollups: [] }).catch(() => {});
    }
  }
  return { written, refused };
}

export async function writeBatch(store: Store, batch: WriteBatch): Promise<WrittenEvent[]> {
  return store.transaction(async (sql) => {
    if (batch.source) await upsertSource(sql, batch.source, batch);
    else await checkOwnership(sql, batch);
    if (batch.setStale !== undefined) {
      await sql.query(`UPDATE "Lease" SET stale = $2, "updatedAt" = now() WHERE "sourceName" = $1 AND stale <> $2`, [batch.source!.name, batch.setStale]);
    }
    if (batch.dirty.length > 0) await upsertLeases(sql, batch);
    const written = batch.events.length > 0 ? await insertEvents(sql, batch) : [];
    if (batch.sourceEvents.length > 0) {
      await sql.query(
        `INSERT INTO "SourceEvent" ("sourceName", seq, type, at, detail)
         SELECT $1, seq, type, at::timestamptz, detail FROM jsonb_to_recordset($2::jsonb) AS x(seq int, type text, at text, detail jsonb)
         ON CONFLICT ("sourceName", seq) DO NOTHING`,
        [batch.source!.name, json(batch.sourceEvents.map((e) => ({ seq: e.seq, type: e.type, at: iso(e.atWall), detail: e.detail })))],
      );
    }
    if (batch.renewals.length > 0) await upsertRenewals(sql, batch);
    if (batch.rollups.length > 0) await upsertRollups(sql, batch);
    if (sql.kind === 'postgres' && (written.length > 0 || batch.dirty.length > 0 || batch.sourceEvents.length > 0)) {
      // Other processes serving the API learn of the change at once (see lib/live/relay.ts),
      // a source's change of status included. (Not of every read: a NOTIFY in each poll's write
      // slowed the collector measurably; the relay reads the sources' last reads itself.)
      const payload = {
        collector: batch.collector.id,
        source: batch.source?.name ?? batch.dirty[0]?.source,
        sourceRow: batch.sourceEvents.length > 0,
        leases: batch.dirty.length <= 200 ? batch.dirty.map((l) => l.id) : null,
        events: written.length <= 200 ? written.map((e) => e.id) : null,
      };
      await sql.query(`SELECT pg_notify('leasehold_changes', $1)`, [json(payload)]);
    }
    return written;
  });
}

/**
 * For batches that leave the source row alone (renewals): still refuse a stale owner. The
 * check holds a share lock on this collector's ownership lease row, so nobody can take the
 * source over until this transaction ends, without contending with the other write queue,
 * which fences on the source row. On the embedded store there is no other collector.
 */
async function checkOwnership(sql: SqlSession, batch: WriteBatch) {
  const name = batch.dirty[0]?.source ?? batch.renewals[0]?.lease.source;
  if (!name || batch.collector.token === 0n) return;
  // A batch without the source's row (renewals) checks that the row still names this
  // observer's ownership token, without locking anything: a lock here would hold up the
  // ownership lease's renewal (or the other write queue) for as long as a large batch takes.
  // A new owner takes the row over with its first write; a renewal batch that raced with
  // that write adds true renewals and no events, and the version guard keeps the newer rows.
  const rows = await sql.query(`SELECT 1 FROM "Source" WHERE name = $1 AND "collectorToken" = $2::bigint`, [name, batch.collector.token.toString()]);
  if (rows.length === 0) throw new StaleOwnerError(name);
}

async function upsertSource(sql: SqlSession, source: SourceRow, batch: WriteBatch) {
  const { collector } = batch;
  const lastSeq = batch.sourceEvents.reduce((max, e) => Math.max(max, e.seq), 0);
  const rows = await sql.query(
    `INSERT INTO "Source" (name, backend, status, "lastGoodReadAt", "lastError", "lastPollMs", "pollMs", detail, "collectorId", "collectorToken", "lastSeq", "updatedAt")
     VALUES ($1, $2, $3::"SourceStatus", $4::timestamptz, $5, $6, $7, $8::jsonb, $9, $10::bigint, $11, now())
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
     RETURNING name`,
    [
      source.name,
      source.backend,
      source.status,
      iso(source.lastGoodReadAt),
      source.lastError,
      source.lastPollMs,
      source.pollMs,
      source.detail === null ? null : json(source.detail),
      collector.id,
      collector.token.toString(),
      lastSeq,
    ],
  );
  if (rows.length === 0) throw new StaleOwnerError(source.name);
}

async function upsertLeases(sql: SqlSession, batch: WriteBatch) {
  const rows = batch.dirty.map((l) => ({
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
    fenced: (l.token ?? l.lastToken) !== null,
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
  }));
  await sql.query(
    `INSERT INTO "Lease" (id, "sourceName", backend, kind, key, state, holder, token, "lastHolder", "lastToken", fenced, "ttlMs",
                          "acquiredAt", "renewedAt", "expiresAt", "observedAt", stale, candidates, transitions, "lastSeq", "renewalSeq",
                          "endedAt", "endedCause", problem, detail, version, "lastIntervalMs", "lastMarginMs", "updatedAt")
     SELECT id, "sourceName", backend, kind, key, state, holder, token::numeric, "lastHolder", "lastToken"::numeric, fenced, "ttlMs",
            "acquiredAt"::timestamptz, "renewedAt"::timestamptz, "expiresAt"::timestamptz, "observedAt"::timestamptz, stale,
            COALESCE(candidates, '[]'::jsonb), transitions, "lastSeq", "renewalSeq"::bigint, "endedAt"::timestamptz, "endedCause", problem, detail,
            version::bigint, "lastIntervalMs", "lastMarginMs", now()
       FROM jsonb_to_recordset($1::jsonb) AS x(id text, "sourceName" text, backend text, kind text, key text, state text, holder text,
            token text, "lastHolder" text, "lastToken" text, fenced boolean, "ttlMs" int8, "acquiredAt" text, "renewedAt" text,
            "expiresAt" text, "observedAt" text, stale boolean, candidates jsonb, transitions int, "lastSeq" int, "renewalSeq" text,
            "endedAt" text, "endedCause" text, problem text, detail jsonb, version text,
            "lastIntervalMs" int8, "lastMarginMs" int8)
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
     WHERE "Lease".version <= EXCLUDED.version`,
    [json(rows)],
  );
}

async function insertEvents(sql: SqlSession, batch: WriteBatch): Promise<WrittenEvent[]> {
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
  const written = await sql.query<{ id: string; leaseId: string; seq: number }>(
    `INSERT INTO "LeaseEvent" ("leaseId", seq, type, at, holder, "previousHolder", token, "previousToken", "gapMs", detail)
     SELECT "leaseId", seq, type, at::timestamptz, holder, "previousHolder", token::numeric, "previousToken"::numeric, "gapMs", detail
       FROM jsonb_to_recordset($1::jsonb) AS x("leaseId" text, seq int, type text, at text, holder text, "previousHolder" text,
            token text, "previousToken" text, "gapMs" int8, detail jsonb)
     ON CONFLICT ("leaseId", seq) DO NOTHING
     RETURNING id::text AS id, "leaseId", seq`,
    [json(rows)],
  );
  return written;
}

async function upsertRenewals(sql: SqlSession, batch: WriteBatch) {
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

async function upsertRollups(sql: SqlSession, batch: WriteBatch) {
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

type LeaseRow = {
  id: string;
  backend: Backend;
  kind: TrackedLease['kind'];
  key: string;
  state: TrackedLease['state'];
  holder: string | null;
  token: string | null;
  lastHolder: string | null;
  lastToken: string | null;
  ttlMs: number | null;
  acquiredAt: Date | null;
  renewedAt: Date | null;
  expiresAt: Date | null;
  observedAt: Date;
  stale: boolean;
  candidates: { holder: string; token: string | null }[];
  transitions: number;
  lastSeq: number;
  renewalSeq: string;
  version: string;
  lastIntervalMs: number | null;
  lastMarginMs: number | null;
  endedAt: Date | null;
  endedCause: 'expired' | 'released' | null;
  problem: string | null;
  detail: Record<string, unknown> | null;
};

export type LoadedSource = {
  leases: TrackedLease[];
  lastSourceSeq: number;
  status: 'up' | 'down' | 'unknown' | null;
};

/** What the store knows of a source, as tracked leases on this process's monotonic clock. */
export async function loadSource(store: Store, name: string, nowMono: number, nowWall: number): Promise<LoadedSource> {
  return store.transaction(async (sql) => {
    const [source] = await sql.query<{ lastSeq: number; status: LoadedSource['status'] }>(
      `SELECT "lastSeq", status::text AS status FROM "Source" WHERE name = $1`,
      [name],
    );
    const rows = await sql.query<LeaseRow>(
      `SELECT id, backend, kind, key, state, holder, token::text AS token, "lastHolder", "lastToken"::text AS "lastToken", "ttlMs"::float8 AS "ttlMs",
              "acquiredAt", "renewedAt", "expiresAt", "observedAt", stale, candidates, transitions, "lastSeq",
              "renewalSeq"::text AS "renewalSeq", version::text AS version, "lastIntervalMs"::float8 AS "lastIntervalMs",
              "lastMarginMs"::float8 AS "lastMarginMs", "endedAt", "endedCause", problem, detail
         FROM "Lease" WHERE "sourceName" = $1`,
      [name],
    );
    const mono = (date: Date | null) => (date === null ? null : nowMono + (date.getTime() - nowWall));
    const leases = rows.map(
      (row): TrackedLease => ({
        id: row.id,
        source: name,
        backend: row.backend,
        kind: row.kind,
        key: row.key,
        state: row.state,
        holder: row.holder,
        token: row.token === null ? null : BigInt(row.token),
        lastHolder: row.lastHolder,
        lastToken: row.lastToken === null ? null : BigInt(row.lastToken),
        ttlMs: row.ttlMs,
        expiresAtMono: mono(row.expiresAt),
        // Across processes the estimate also carries both wall clocks' drift: be generous.
        expiryUncertaintyMs: 1_000,
        expiresAtWall: row.expiresAt?.getTime() ?? null,
        acquiredAtWall: row.acquiredAt?.getTime() ?? null,
        renewedAtWall: row.renewedAt?.getTime() ?? null,
        lastRenewalMono: mono(row.renewedAt ?? row.acquiredAt),
        observedAtMono: mono(row.observedAt)!,
        observedAtWall: row.observedAt.getTime(),
        stale: row.stale,
        candidates: (row.candidates ?? []).map((c) => ({ holder: c.holder, token: c.token === null ? null : BigInt(c.token) })),
        transitions: row.transitions,
        ended:
          row.endedAt && row.lastHolder && row.endedCause
            ? { holder: row.lastHolder, token: row.lastToken === null ? null : BigInt(row.lastToken), atMono: mono(row.endedAt)!, atWall: row.endedAt.getTime(), cause: row.endedCause }
            : null,
        problem: row.problem,
        detail: row.detail,
        eventSeq: row.lastSeq,
        renewalSeq: Number(row.renewalSeq),
        version: Number(row.version),
        lastRenewal: row.lastIntervalMs === null || row.lastMarginMs === null ? null : { intervalMs: row.lastIntervalMs, marginMs: row.lastMarginMs },
      }),
    );
    return { leases, lastSourceSeq: source?.lastSeq ?? 0, status: source?.status ?? null };
  });
}
