import { StorePage } from '@/components/store-page';
import { Time } from '@/components/time';
import { DataTable } from '@/components/ui/data-table';
import { EmptyState } from '@/components/ui/empty-state';
import { listFiringAlerts } from '@/lib/queries/console';
import { pageData } from '@/lib/queries/page-data';
import { NotAllowed } from '@/components/auth/not-allowed';
import { pageAccess } from '@/lib/auth/page';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Alerts' };

export default async function AlertsPage() {
  const access = await pageAccess('PAGE /alerts');
  if (!access.allowed) return <NotAllowed message={access.message} />;
  return (
    <StorePage
      title="Alerts"
      subtitle="What is firing now."
      result={await pageData((store) => listFiringAlerts(store))}
      isEmpty={(data) => data.firing.length === 0}
      empty={({ rules }) => (
        <EmptyState title="Nothing is firing">
          <p>{rules === 0 ? 'No alert rules are defined yet.' : `${rules} alert rule${rules === 1 ? ' is' : 's are'} defined; none is firing.`}</p>
        </EmptyState>
      )}
    >
      {({ firing }) => (
        <DataTable
          label="Firing alerts"
          rows={firing}
          rowKey={(alert) => String(alert.id)}
          columns={[
            { header: 'Since', cell: (alert) => <Time iso={alert.startedAt} /> },
            { header: 'Alert', cell: (alert) => alert.summary },
          ]}
        />
      )}
    </StorePage>
  );
}
