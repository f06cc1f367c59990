import { Suspense } from 'react';
import { Overview } from '@/components/overview/overview';

export const dynamic = 'force-dynamic';

export default function OverviewPage() {
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
