import { Suspense } from 'react';
import { preload } from 'react-dom';
import { Overview } from '@/components/overview/overview';
import { NotAllowed } from '@/components/auth/not-allowed';
import { pageAccess } from '@/lib/auth/page';
import { OVERVIEW_FIRST_READ } from '@/lib/domain/overview';
import { overviewSnapshot } from '@/lib/queries/overview-snapshot';
import { processRoot } from '@/lib/root';

export const dynamic = 'force-dynamic';

type Props = { searchParams: Promise<Record<string, string | string[] | undefined>> };

export default async function OverviewPage({ searchParams }: Props) {
  const access = await pageAccess('PAGE /');
  if (!access.allowed) return <NotAllowed message={access.message} />;
  // The first leases drawn by the server, for the view without filters (what opens at 3 a.m.):
  // seen before the page's scripts have loaded. A filtered view waits for them.
  const query = await searchParams;
  const filtered = ['source', 'state', 'q', 'sort'].some((name) => query[name] !== undefined && query[name] !== '');
  const snapshot = filtered ? null : await overviewSnapshot(processRoot());
  // The browser starts reading the lease list while it reads the page's scripts, not after
  // hydration: with every source down at 3 a.m., what is known shows within a second or two.
  // (An earlier preload here seemed to make a cold server's first overview fail to hydrate,
  // React #418; the cause was components/theme-script.ts, fixed since.) fetchJson's plain GET
  // is answered from this preload.
  preload(OVERVIEW_FIRST_READ, { as: 'fetch', crossOrigin: 'anonymous' });
  return (
    <>
      <h1>Overview</h1>
      <p className="subtitle">Every lease in every source: who holds it, until when, with which token. Problems first.</p>
      <Suspense>
        <Overview snapshot={snapshot} />
      </Suspense>
    </>
  );
}
