import { Suspense } from 'react';
import { preload } from 'react-dom';
import { Overview } from '@/components/overview/overview';
import { NotAllowed } from '@/components/auth/not-allowed';
import { pageAccess } from '@/lib/auth/page';
import { OVERVIEW_FIRST_READ } from '@/lib/domain/overview';

export const dynamic = 'force-dynamic';

export default async function OverviewPage() {
  const access = await pageAccess('PAGE /');
  if (!access.allowed) return <NotAllowed message={access.message} />;
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
        <Overview />
      </Suspense>
    </>
  );
}
