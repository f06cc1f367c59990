import { NotAllowed } from '@/components/auth/not-allowed';
import { StorePage } from '@/components/store-page';
import { Time } from '@/components/time';
import { DataTable } from '@/components/ui/data-table';
import { EmptyState } from '@/components/ui/empty-state';
import { pageAccess } from '@/lib/auth/page';
import { auditPage } from '@/lib/queries/audit';
import { pageData } from '@/lib/queries/page-data';
import type { AuditPhase } from '@/lib/domain/audit';
import { ADMIN_ACTIONS } from '@/lib/domain/admin-actions';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Audit log' };

type Props = { searchParams: Promise<Record<string, string | string[] | undefined>> };
const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value)?.slice(0, 2000) || undefined;
const PHASES: readonly string[] = ['requested', 'done', 'refused', 'error'];

export default async function AuditPage({ searchParams }: Props) {
  const access = await pageAccess('PAGE /audit');
  if (!access.allowed) return <NotAllowed message={access.message} />;
  const params = await searchParams;
  const filter = { actor: first(params.actor), leaseId: first(params.lease), action: first(params.action), phase: PHASES.includes(first(params.phase) ?? '') ? (first(params.phase) as AuditPhase) : undefined };
  const cursorText = first(params.cursor);
  const cursor = cursorText && /^\d{1,19}$/.test(cursorText) ? BigInt(cursorText) : undefined;
  const older = (next: string) => `?${new URLSearchParams(Object.entries({ actor: filter.actor, lease: filter.leaseId, action: filter.action, phase: filter.phase, cursor: next }).filter((e): e is [string, string] => e[1] !== undefined))}`;
  const csv = new URLSearchParams(Object.entries({ actor: filter.actor, lease: filter.leaseId, action: filter.action, phase: filter.phase }).filter((e): e is [string, string] => e[1] !== undefined));
  return (
    <StorePage
      title="Audit log"
      subtitle="Every admin action, requested and its result, newest first. Entries cannot be changed or deleted, and each carries the hash of the one before (leasehold audit verify)."
      result={await pageData((store) => auditPage(store, { ...filter, limit: 200, cursor }))}
      isEmpty={(page) => page.entries.length === 0}
      empty={() => (
        <EmptyState title={Object.values(filter).some(Boolean) ? 'No entries match' : 'No admin actions yet'}>
          <p>{Object.values(ADMIN_ACTIONS).map((row) => row.title).join(' and ')} actions, with who asked, why, and what happened, appear here.</p>
        </EmptyState>
      )}
    >
      {(page) => (
        <>
          <form className="filters" method="get" aria-label="Filter the audit log">
            <input name="actor" placeholder="who" defaultValue={filter.actor} aria-label="Who" />
            <input name="lease" placeholder="lease id" defaultValue={filter.leaseId} aria-label="Lease" />
            <select name="action" defaultValue={filter.action ?? ''} aria-label="Action">
              <option value="">any action</option>
              {Object.keys(ADMIN_ACTIONS).map((name) => (
                <option key={name} value={name}>
                  {name}
                </option>
              ))}
            </select>
            <select name="phase" defaultValue={filter.phase ?? ''} aria-label="Phase">
              <option value="">any phase</option>
              {PHASES.map((phase) => (
                <option key={phase}>{phase}</option>
              ))}
            </select>
            <button className="button" type="submit">
              Filter
            </button>
            <a className="button subtle" href={`/api/v1/audit.csv?${csv}`} download>
              Export CSV
            </a>
          </form>
          <DataTable
            label="Audit log"
            rows={page.entries}
            rowKey={(entry) => entry.id}
            columns={[
              { header: 'When', cell: (entry) => <span id={`audit-${entry.id}`}><Time iso={entry.at} /></span> },
              { header: 'Who', cell: (entry) => `${entry.actor} (${entry.actorRole}, ${entry.authMethod})` },
              { header: 'Action', cell: (entry) => entry.action },
              { header: 'Result', cell: (entry) => (entry.status && entry.phase !== 'done' ? `${entry.phase} ${entry.status}` : entry.phase) },
              { header: 'Lease', cell: (entry) => entry.leaseId ?? '—', mono: true },
              { header: 'Expected', cell: (entry) => (entry.expectedHolder ? `${entry.expectedHolder} @ ${entry.expectedToken ?? '—'}` : '—'), mono: true },
              { header: 'Token', cell: (entry) => (entry.newToken ? `${entry.previousToken ?? '—'} → ${entry.newToken}` : '—'), mono: true },
              { header: 'Reason', cell: (entry) => entry.reason ?? '—' },
              { header: 'From', cell: (entry) => entry.clientAddress ?? '—', mono: true },
            ]}
          />
          {page.next && (
            <p>
              <a className="button" href={older(page.next)}>
                Older entries
              </a>
            </p>
          )}
        </>
      )}
    </StorePage>
  );
}
