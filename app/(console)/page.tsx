import { Suspense } from 'react';
import { preload } from 'react-dom';
import { Overview } from '@/components/overview/overview';

export const dynamic = 'force-dynamic';

export default function OverviewPage() {
  // The browser starts reading the lease list while it reads the page's scripts, not after
  // hydration: with every source down at 3 a.m., what is known shows within a second or two.
  // (An earlier preload here seemed to make a cold server's first overview fail to hydrate,
  // React #418; the cause was components/theme-script.ts, fixed since.) fetchJson's plain GET
  // is answered from this preload.
  preload('/api/v1/leases', { as: 'fetch', crossOrigin: 'anonymous' });
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
