import { Suspense } from 'react';
import { FailoversView } from '@/components/failovers/failovers-view';
import { FailoversPageSkeleton } from '@/components/failovers/skeleton';

export const metadata = { title: 'Failovers' };

/** Every change of holder across all leases; the page reads its range and filters from the URL, in the browser. */
export default function FailoversPage() {
  return (
    <Suspense fallback={<FailoversPageSkeleton />}>
      <FailoversView />
    </Suspense>
  );
}
