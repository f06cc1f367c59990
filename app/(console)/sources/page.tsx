import { StorePage } from '@/components/store-page';
import { Time } from '@/components/time';
import { Badge } from '@/components/ui/badge';
import { DataTable } from '@/components/ui/data-table';
import { EmptyState } from '@/components/ui/empty-state';
import { listSources } from '@/lib/queries/console';
import { pageData } from '@/lib/queries/page-data';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Sources' };

export default async function SourcesPage() {
  return (
    <StorePage
      title="Sources"
      subtitle="The backends Leasehold reads, and whether it can read them."
      result={await pageData(listSources)}
      isEmpty={(sources) => sources.length === 0}
      empty={() => (
        <EmptyState title="No sources are configured">
          <p>
            Add PostgreSQL, Redis and etcd sources to <code>leasehold.config.json</code> (start from{' '}
            <code>leasehold.config.example.json</code>) and restart.
          </p>
        </EmptyState>
      )}
    >
      {(sources) => (
        <DataTable
          label="Sources"
          rows={sources}
          rowKey={(source) => source.name}
          columns={[
            { header: 'Source', cell: (source) => `${source.name}${source.configured ? '' : ' (no longer configured)'}`, mono: true },
            { header: 'Backend', cell: (source) => source.backend },
            { header: 'Target', cell: (source) => source.target || '—', mono: true },
            {
              header: 'Status',
              cell: (source) => <Badge tone={source.status === 'up' ? 'ok' : source.status === 'down' ? 'bad' : 'muted'}>{source.status}</Badge>,
            },
            { header: 'Last good read', cell: (source) => <Time iso={source.lastGoodReadAt} /> },
            { header: 'Last error', cell: (source) => source.lastError ?? '—' },
          ]}
        />
      )}
    </StorePage>
  );
}
