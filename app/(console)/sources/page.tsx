import { Badge } from '@/components/ui/badge';
import { EmptyState } from '@/components/ui/empty-state';
import { StoreProblem } from '@/components/store-problem';
import { Time } from '@/components/time';
import { listSources } from '@/lib/queries/console';
import { pageData } from '@/lib/queries/page-data';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Sources' };

export default async function SourcesPage() {
  const result = await pageData(listSources);
  return (
    <>
      <h1>Sources</h1>
      <p className="subtitle">The backends Leasehold reads, and whether it can read them.</p>
      {!result.ok ? (
        <StoreProblem problem={result.problem} />
      ) : result.data.length === 0 ? (
        <EmptyState title="No sources are configured">
          <p>
            Add PostgreSQL, Redis and etcd sources to <code>leasehold.config.json</code> (start from{' '}
            <code>leasehold.config.example.json</code>) and restart.
          </p>
        </EmptyState>
      ) : (
        <table className="data" aria-label="Sources">
          <thead>
            <tr>
              <th scope="col">Source</th>
              <th scope="col">Backend</th>
              <th scope="col">Target</th>
              <th scope="col">Status</th>
              <th scope="col">Last good read</th>
              <th scope="col">Last error</th>
            </tr>
          </thead>
          <tbody>
            {result.data.map((source) => (
              <tr key={source.name}>
                <td className="mono">
                  {source.name}
                  {source.configured ? '' : ' (no longer configured)'}
                </td>
                <td>{source.backend}</td>
                <td className="mono">{source.target || '—'}</td>
                <td>
                  <Badge tone={source.status === 'up' ? 'ok' : source.status === 'down' ? 'bad' : 'muted'}>{source.status}</Badge>
                </td>
                <td>
                  <Time iso={source.lastGoodReadAt} />
                </td>
                <td>{source.lastError ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
