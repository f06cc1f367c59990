import { Suspense } from 'react';
import { Overview } from '@/components/overview/overview';

export const dynamic = 'force-dynamic';

export default function OverviewPage() {
  // No preload() of the lease list here: with it, a cold server's first overview failed to
  // hydrate (React #418) about one load in four in e2e, without it less often. The cause was
  // found later (components/theme-script.ts); the preload only changed the timing.
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
