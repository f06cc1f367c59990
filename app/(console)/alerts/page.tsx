import { EmptyState } from '@/components/ui/empty-state';
import { StoreProblem } from '@/components/store-problem';
import { Time } from '@/components/time';
import { listFiringAlerts } from '@/lib/queries/console';
import { pageData } from '@/lib/queries/page-data';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Alerts' };

export default async function AlertsPage() {
  const result = await pageData((store) => listFiringAlerts(store));
  return (
    <>
      <h1>Alerts</h1>
      <p className="subtitle">What is firing now.</p>
      {!result.ok ? (
        <StoreProblem problem={result.problem} />
      ) : result.data.firing.length === 0 ? (
        <EmptyState title="Nothing is firing">
          <p>
            {result.data.rules === 0
              ? 'No alert rules are defined yet.'
              : `${result.data.rules} alert rule${result.data.rules === 1 ? ' is' : 's are'} defined; none is firing.`}
          </p>
        </EmptyState>
      ) : (
        <table className="data" aria-label="Firing alerts">
          <thead>
            <tr>
              <th scope="col">Since</th>
              <th scope="col">Alert</th>
            </tr>
          </thead>
          <tbody>
            {result.data.firing.map((alert) => (
              <tr key={alert.id}>
                <td>
                  <Time iso={alert.startedAt} />
                </td>
                <td>{alert.summary}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
