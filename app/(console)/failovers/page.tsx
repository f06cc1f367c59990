import { StorePage } from '@/components/store-page';
import { Time } from '@/components/time';
import { DataTable } from '@/components/ui/data-table';
import { EmptyState } from '@/components/ui/empty-state';
import { listFailovers } from '@/lib/queries/leases';
import { pageData } from '@/lib/queries/page-data';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Failovers' };

const withToken = (holder: string | null, token: string | null) => `${holder ?? '—'}${token ? ` (token ${token})` : ''}`;

export default async function FailoversPage() {
  return (
    <StorePage
      title="Failovers"
      subtitle="Every change of holder: expiries, releases, takeovers and forced actions, newest first."
      result={await pageData(async (store) => (await listFailovers(store, { limit: 200 })).failovers)}
      isEmpty={(rows) => rows.length === 0}
      empty={() => (
        <EmptyState title="No failovers recorded">
          <p>No lease has changed hands since Leasehold started watching.</p>
        </EmptyState>
      )}
    >
      {(rows) => (
        <DataTable
          label="Failovers"
          rows={rows}
          rowKey={(row) => row.id}
          columns={[
            { header: 'When', cell: (row) => <Time iso={row.at} /> },
            { header: 'Lease', cell: (row) => row.leaseId, mono: true },
            { header: 'Cause', cell: (row) => row.cause.replace('_', ' ') },
            { header: 'From', cell: (row) => withToken(row.previousHolder, row.previousToken), mono: true },
            { header: 'To', cell: (row) => withToken(row.holder, row.token), mono: true },
            { header: 'Gap', cell: (row) => (row.gapMs === null ? '—' : `${(row.gapMs / 1000).toFixed(1)} s`) },
          ]}
        />
      )}
    </StorePage>
  );
}
