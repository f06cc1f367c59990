import { NotAllowed } from '@/components/auth/not-allowed';
import { InboxView } from '@/components/demo/inbox-view';
import { pageAccess } from '@/lib/auth/page';

export const metadata = { title: 'Webhook inbox (demo)' };

export default async function InboxPage() {
  const access = await pageAccess('PAGE /demo/inbox');
  if (!access.allowed) return <NotAllowed message={access.message} />;
  return (
    <>
      <h1>Webhook inbox</h1>
      <p className="subtitle">
        The demo&rsquo;s own receiver. Leasehold sends its alerts here as it would to yours: signed (Standard Webhooks), retried, at most once per delivery. The endpoint is
        &ldquo;demo-inbox&rdquo; on the Alerts page.
      </p>
      <InboxView />
    </>
  );
}
