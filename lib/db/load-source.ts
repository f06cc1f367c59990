// What the store knows of one source, as the collector's tracked leases: where an observer
// that starts (or takes a source over) begins.
import type { TrackedLease } from '../domain/observe';
import type { Backend } from '../domain/types';
import type { Store } from './store';

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
