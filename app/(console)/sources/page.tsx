import { Suspense } from 'react';
import { SourcesPageSkeleton } from '@/components/sources/skeleton';
import { SourcesView } from '@/components/sources/sources-view';
import { NotAllowed } from '@/components/auth/not-allowed';
import { pageAccess } from '@/lib/auth/page';

export const metadata = { title: 'Sources' };

/** Every configured backend and its health, kept live in the browser. */
export default async function SourcesPage() {
  const access = await pageAccess('PAGE /sources');
  if (!access.allowed) return <NotAllowed message={access.message} />;
  return (
    <Suspense fallback={<SourcesPageSkeleton />}>
      <SourcesView />
    </Suspense>
  );
}
