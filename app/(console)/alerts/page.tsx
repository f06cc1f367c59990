import { AlertsView } from '@/components/alerts/alerts-view';
import { NotAllowed } from '@/components/auth/not-allowed';
import { StorePage } from '@/components/store-page';
import { WEBHOOK_FORMATS } from '@/lib/alerts/deliver/formats';
import { pageAccess } from '@/lib/auth/page';
import { can } from '@/lib/auth/permissions';
import { alertsPage, historyCursor } from '@/lib/queries/alerts';
import { pageData } from '@/lib/queries/page-data';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Alerts' };

type Props = { searchParams: Promise<Record<string, string | string[] | undefined>> };
const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value)?.slice(0, 40) || undefined;

export default async function AlertsPage({ searchParams }: Props) {
  const access = await pageAccess('PAGE /alerts');
  if (!access.allowed) return <NotAllowed message={access.message} />;
  const manage = access.principal !== null && can(access.principal.role, 'alerts:manage');
  const cursor = historyCursor(first((await searchParams).cursor));
  return (
    <StorePage
      title="Alerts"
      subtitle={manage ? 'What is firing now, what resolved, the rules and silences, and where alerts are sent. Read again every 20 seconds.' : 'What is firing now, what resolved, the rules and the silences. Read again every 20 seconds.'}
      result={await pageData((store) => alertsPage(store, { cursor, manage }))}
      isEmpty={() => false}
      empty={() => null}
    >
      {(data) => <AlertsView data={data} manage={manage} cursor={cursor} formats={WEBHOOK_FORMATS} />}
    </StorePage>
  );
}
