import { Suspense } from 'react';
import { FailoversView } from '@/components/failovers/failovers-view';
import { FailoversPageSkeleton } from '@/components/failovers/skeleton';
import { NotAllowed } from '@/components/auth/not-allowed';
import { pageAccess } from '@/lib/auth/page';

export const metadata = { title: 'Failovers' };

/** Every change of holder across all leases; the page reads its range and filters from the URL, in the browser. */
export default async function FailoversPage() {
  const access = await pageAccess('PAGE /failovers');
  if (!access.allowed) return <NotAllowed message={access.message} />;
  return (
    <Suspense fallback={<FailoversPageSkeleton />}>
      <FailoversView />
    </Suspense>
  );
}
