import { Badge, type BadgeTone } from '@/components/ui/badge';
import { EmptyState } from '@/components/ui/empty-state';
import { StoreProblem } from '@/components/store-problem';
import { Time } from '@/components/time';
import type { LeaseState, LeaseView } from '@/lib/domain/types';
import { listLeases } from '@/lib/queries/leases';
import { pageData } from '@/lib/queries/page-data';

export const dynamic = 'force-dynamic';

const STATE_TONE: Record<LeaseState, BadgeTone> = { held: 'ok', free: 'muted', expired: 'bad', unknown: 'warn' };

export default async function OverviewPage() {
  const result = await pageData(async (store, config) => ({
    leases: await listLeases(store),
    sourceNames: config.sources.map((source) => source.name),
  }));
  return (
    <>
      <h1>Overview</h1>
      <p className="subtitle">Every lease in every source: who holds it, until when, with which token.</p>
      {!result.ok ? (
        <StoreProblem problem={result.problem} />
      ) : result.data.leases.length === 0 ? (
        <NoLeases sourceNames={result.data.sourceNames} />
      ) : (
        <LeaseTable leases={result.data.leases} />
      )}
    </>
  );
}

function NoLeases({ sourceNames }: { sourceNames: string[] }) {
  if (sourceNames.length === 0) {
    return (
      <EmptyState title="No leases yet: no sources are configured">
        <p>
          Leasehold watches the PostgreSQL, Redis and etcd sources listed in <code>leasehold.config.json</code>. Copy{' '}
          <code>leasehold.config.example.json</code> to <code>leasehold.config.json</code>, name your sources, and restart.
        </p>
      </EmptyState>
    );
  }
  return (
    <EmptyState title="No leases in the store yet">
      <p>
        {sourceNames.length === 1 ? 'One source is' : `${sourceNames.length} sources are`} configured ({sourceNames.join(', ')}). Leases
        appear here once they have been read.
      </p>
    </EmptyState>
  );
}

function LeaseTable({ leases }: { leases: LeaseView[] }) {
  return (
    <table className="data" aria-label="Leases">
      <thead>
        <tr>
          <th scope="col">Lease</th>
          <th scope="col">Kind</th>
          <th scope="col">State</th>
          <th scope="col">Holder</th>
          <th scope="col">Token</th>
          <th scope="col">TTL</th>
          <th scope="col">Observed</th>
        </tr>
      </thead>
      <tbody>
        {leases.map((lease) => (
          <tr key={lease.id}>
            <td className="mono">{lease.id}</td>
            <td>{lease.kind}</td>
            <td>
              <Badge tone={lease.stale ? 'warn' : STATE_TONE[lease.state]}>{lease.stale ? `${lease.state} (stale)` : lease.state}</Badge>
            </td>
            <td className="mono">{lease.holder ?? '—'}</td>
            <td className="mono">{lease.token ?? 'unfenced'}</td>
            <td>{lease.ttlMs === null ? '—' : `${(lease.ttlMs / 1000).toFixed(1)} s`}</td>
            <td>
              <Time iso={lease.observedAt} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
