// The audit log's read model: a page of entries for GET /api/v1/audit and the /audit page, and
// the export (GET /api/v1/audit.csv). Filters and paging: lib/api/query-schemas.ts auditQuery
// and auditCsvQuery; the table: lib/db/audit.ts.
import type { Store } from '../db';
import { auditEntryView, listAudit, type AuditFilter } from '../db/audit';
import type { AuditEntryView } from '../domain/audit';
import { toCsv, type CsvValue } from '../domain/csv';
import { systemClock } from '../time/clock';

export type AuditQuery = AuditFilter;
export type AuditPage = { entries: AuditEntryView[]; next: string | null };

/** A page of entries, newest first, and the cursor of the next page (null on the last). */
export async function auditPage(store: Store, query: AuditQuery): Promise<AuditPage> {
  const { rows, next } = await listAudit(store, query);
  return { entries: rows.map(auditEntryView), next };
}

export const AUDIT_CSV_HEADER = [
  'id',
  'at',
  'request_id',
  'phase',
  'status',
  'action',
  'actor',
  'actor_role',
  'auth_method',
  'client_address',
  'lease',
  'reason',
  'expected_holder',
  'expected_token',
  'actual_holder',
  'actual_token',
  'previous_token',
  'new_token',
  'dry_run',
  'detail',
  'prev_hash',
  'hash',
] as const;

/** A token cell as a number (never defused as a formula: "-5" is a token, not text). */
const token = (value: string | null): CsvValue => (value === null ? null : BigInt(value));

/**
 * The entries as CSV (RFC 4180, CRLF lines, lib/domain/csv.ts): text written by people or read
 * from backends (actor, reason, holders, detail) is quoted when needed and, when it begins with
 * = + - @ (or a tab or carriage return), prefixed with an apostrophe so a spreadsheet opens it as text.
 */
export function auditToCsv(entries: Iterable<AuditEntryView>): string {
  const rows = (function* () {
    for (const e of entries) {
      yield [
        BigInt(e.id),
        e.at,
        e.requestId,
        e.phase,
        e.status,
        e.action,
        e.actor,
        e.actorRole,
        e.authMethod,
        e.clientAddress,
        e.leaseId,
        e.reason,
        e.expectedHolder,
        token(e.expectedToken),
        e.actualHolder,
        token(e.actualToken),
        token(e.previousToken),
        token(e.newToken),
        e.dryRun ? 'true' : 'false',
        e.detail === null ? null : JSON.stringify(e.detail),
        e.prevHash,
        e.hash,
      ] satisfies CsvValue[];
    }
  })();
  return toCsv(AUDIT_CSV_HEADER, rows);
}

export type AuditCsvQuery = Omit<AuditFilter, 'cursor'>;
export type AuditCsv = { csv: string; filename: string; rows: number; truncated: boolean };

/** Entries read from the store per query. */
export const AUDIT_CSV_PAGE = 1_000;

/**
 * The export as a file: every entry matching the filters, newest first, at most `query.limit`
 * (`truncated` when the limit cut them), as CSV with a byte-order mark. Null when `signal`
 * aborts (the client went away) before a page is read.
 */
export async function auditCsv(store: Store, query: AuditCsvQuery, signal?: AbortSignal): Promise<AuditCsv | null> {
  const entries: AuditEntryView[] = [];
  let cursor: bigint | undefined;
  let truncated = false;
  for (;;) {
    if (signal?.aborted) return null;
    const page = await auditPage(store, { ...query, limit: Math.min(AUDIT_CSV_PAGE, query.limit - entries.length + 1), cursor });
    entries.push(...page.entries);
    if (entries.length > query.limit) {
      truncated = true;
      entries.length = query.limit;
      break;
    }
    if (page.next === null) break;
    cursor = BigInt(page.next);
  }
  return auditCsvFile(entries, truncated, new Date(systemClock.wall()));
}

export function auditCsvFile(entries: readonly AuditEntryView[], truncated: boolean, now: Date): AuditCsv {
  const stamp = now.toISOString().slice(0, 19).replace(/[:T]/g, '-');
  // The BOM makes Excel read the file as UTF-8 (actors, reasons and holders may be any text).
  return { csv: `\uFEFF${auditToCsv(entries)}`, filename: `leasehold-audit-${stamp}.csv`, rows: entries.length, truncated };
}
