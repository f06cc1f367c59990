import { StorePage } from '@/components/store-page';
import { Time } from '@/components/time';
import { Badge, type BadgeTone } from '@/components/ui/badge';
import { DataTable } from '@/components/ui/data-table';
import { EmptyState } from '@/components/ui/empty-state';
import type { LeaseState } from '@/lib/domain/types';
import { listLeases } from '@/lib/queries/leases';
import { pageData } from '@/lib/queries/page-data';

export const dynamic = 'force-dynamic';

const STATE_TONE: Record<LeaseState, BadgeTone> = { held: 'ok', free: 'muted', expired: 'bad', unknown: 'warn' };

export default async function OverviewPage() {
  const result = await pageData(async (store, config) => ({
    leases: (await listLeases(store, { limit: 1_000 })).leases,
    sourceNames: config.sources.map((source) => source.name),
  }));
  return (
    <StorePage
      title="Overview"
      subtitle="Every lease in every source: who holds it, until when, with which token."
      result={result}
      isEmpty={(data) => data.leases.length === 0}
      empty={({ sourceNames }) =>
        sourceNames.length === 0 ? (
          <EmptyState title="No leases yet: no sources are configured">
            <p>
              Leasehold watches the PostgreSQL, Redis and etcd sources listed in <code>leasehold.config.json</code>. Copy{' '}
              <code>leasehold.config.example.json</code> to <code>leasehold.config.json</code>, name your sources, and restart.
            </p>
          </EmptyState>
        ) : (
          <EmptyState title="No leases in the store yet">
            <p>
              {sourceNames.length === 1 ? 'One source is' : `${sourceNames.length} sources are`} configured ({sourceNames.join(', ')}).
              Leases appear here once they have been read.
            </p>
          </EmptyState>
        )
      }
    >
      {({ leases }) => (
        <DataTable
          label="Leases"
          rows={leases}
          rowKey={(lease) => lease.id}
          columns={[
            { header: 'Lease', cell: (lease) => lease.id, mono: true },
            { header: 'Kind', cell: (lease) => lease.kind },
            {
              header: 'State',
              cell: (lease) => (
                <Badge tone={lease.stale ? 'warn' : STATE_TONE[lease.state]}>{lease.stale ? `${lease.state} (stale)` : lease.state}</Badge>
              ),
            },
            { header: 'Holder', cell: (lease) => lease.holder ?? '—', mono: true },
            { header: 'Token', cell: (lease) => lease.token ?? 'unfenced', mono: true },
            { header: 'TTL', cell: (lease) => (lease.ttlMs === null ? '—' : `${(lease.ttlMs / 1000).toFixed(1)} s`) },
            { header: 'Observed', cell: (lease) => <Time iso={lease.observedAt} /> },
          ]}
        />
      )}
    </StorePage>
  );
}
