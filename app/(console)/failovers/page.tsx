import { EmptyState } from '@/components/ui/empty-state';
import { StoreProblem } from '@/components/store-problem';
import { Time } from '@/components/time';
import { listFailovers } from '@/lib/queries/console';
import { pageData } from '@/lib/queries/page-data';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Failovers' };

export default async function FailoversPage() {
  const result = await pageData((store) => listFailovers(store));
  return (
    <>
      <h1>Failovers</h1>
      <p className="subtitle">Every change of holder: expiries, releases, takeovers and forced actions, newest first.</p>
      {!result.ok ? (
        <StoreProblem problem={result.problem} />
      ) : result.data.length === 0 ? (
        <EmptyState title="No failovers recorded">
          <p>No lease has changed hands since Leasehold started watching.</p>
        </EmptyState>
      ) : (
        <table className="data" aria-label="Failovers">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Lease</th>
              <th scope="col">Cause</th>
              <th scope="col">From</th>
              <th scope="col">To</th>
              <th scope="col">Gap</th>
            </tr>
          </thead>
          <tbody>
            {result.data.map((row) => (
              <tr key={`${row.leaseId}-${row.at}-${row.type}`}>
                <td>
                  <Time iso={row.at} />
                </td>
                <td className="mono">{row.leaseId}</td>
                <td>{row.type.replace('_', ' ')}</td>
                <td className="mono">
                  {row.previousHolder ?? '—'} {row.previousToken ? `(token ${row.previousToken})` : ''}
                </td>
                <td className="mono">
                  {row.holder ?? '—'} {row.token ? `(token ${row.token})` : ''}
                </td>
                <td>{row.gapMs === null ? '—' : `${(row.gapMs / 1000).toFixed(1)} s`}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
