import { Suspense } from 'react';
import { SourcesPageSkeleton } from '@/components/sources/skeleton';
import { SourcesView } from '@/components/sources/sources-view';

export const metadata = { title: 'Sources' };

/** Every configured backend and its health, kept live in the browser. */
export default function SourcesPage() {
  return (
    <Suspense fallback={<SourcesPageSkeleton />}>
      <SourcesView />
    </Suspense>
  );
}
