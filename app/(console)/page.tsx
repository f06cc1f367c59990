import { Suspense } from 'react';
import { preload } from 'react-dom';
import { Overview } from '@/components/overview/overview';

export const dynamic = 'force-dynamic';

export default function OverviewPage() {
  // The browser starts reading the lease list with the page's scripts, not after them.
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
