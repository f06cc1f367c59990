import { EmptyState } from '@/components/ui/empty-state';
import { StoreProblem } from '@/components/store-problem';
import { Time } from '@/components/time';
import { listAudit } from '@/lib/queries/console';
import { pageData } from '@/lib/queries/page-data';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Audit log' };

export default async function AuditPage() {
  const result = await pageData((store) => listAudit(store));
  return (
    <>
      <h1>Audit log</h1>
      <p className="subtitle">Every admin action, requested and done, newest first. Entries cannot be changed or deleted.</p>
      {!result.ok ? (
        <StoreProblem problem={result.problem} />
      ) : result.data.length === 0 ? (
        <EmptyState title="No admin actions yet">
          <p>Force-expire and force-release actions, with who asked, why, and what happened, appear here.</p>
        </EmptyState>
      ) : (
        <table className="data" aria-label="Audit log">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Who</th>
              <th scope="col">Action</th>
              <th scope="col">Phase</th>
              <th scope="col">Lease</th>
              <th scope="col">Reason</th>
            </tr>
          </thead>
          <tbody>
            {result.data.map((entry) => (
              <tr key={entry.id}>
                <td>
                  <Time iso={entry.at} />
                </td>
                <td>{entry.actor}</td>
                <td>{entry.action}</td>
                <td>{entry.phase}</td>
                <td className="mono">{entry.leaseId ?? '—'}</td>
                <td>{entry.reason ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
