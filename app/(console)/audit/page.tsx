import { StorePage } from '@/components/store-page';
import { Time } from '@/components/time';
import { DataTable } from '@/components/ui/data-table';
import { EmptyState } from '@/components/ui/empty-state';
import { listAudit } from '@/lib/queries/console';
import { pageData } from '@/lib/queries/page-data';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Audit log' };

export default async function AuditPage() {
  return (
    <StorePage
      title="Audit log"
      subtitle="Every admin action, requested and done, newest first. Entries cannot be changed or deleted."
      result={await pageData((store) => listAudit(store))}
      isEmpty={(entries) => entries.length === 0}
      empty={() => (
        <EmptyState title="No admin actions yet">
          <p>Force-expire and force-release actions, with who asked, why, and what happened, appear here.</p>
        </EmptyState>
      )}
    >
      {(entries) => (
        <DataTable
          label="Audit log"
          rows={entries}
          rowKey={(entry) => entry.id}
          columns={[
            { header: 'When', cell: (entry) => <Time iso={entry.at} /> },
            { header: 'Who', cell: (entry) => entry.actor },
            { header: 'Action', cell: (entry) => entry.action },
            { header: 'Phase', cell: (entry) => entry.phase },
            { header: 'Lease', cell: (entry) => entry.leaseId ?? '—', mono: true },
            { header: 'Reason', cell: (entry) => entry.reason ?? '—' },
          ]}
        />
      )}
    </StorePage>
  );
}
