'use client';
// In the sidebar while the embedded demo runs: says that this is the demo, leads to its
// digest page and to running Leasehold on real backends, and switches the faults. It sits
// at the foot of the sidebar, which grows upwards: appearing moves nothing on the page.
import Link from 'next/link';
import { useDemo, useSetFaults } from './use-demo';

/** `controls`: whether this person may switch the faults (an operator); others see the switch, disabled. */
export function DemoCard({ controls }: { controls: boolean }) {
  const demo = useDemo();
  const setFaults = useSetFaults();
  const status = demo.data;
  if (!status) return null;
  return (
    <section className="demo-card" aria-label="Demo" data-testid="demo-banner">
      <strong>This is the demo</strong>
      <p>
        {status.fleetSize} simulated servers run Pixly&rsquo;s weekly digest on the embedded database, with pauses and crashes.{' '}
        <Link prefetch={false} href="/digest">
          Digest
        </Link>{' '}
        ·{' '}
        <Link prefetch={false} href="/demo/inbox">
          Webhook inbox
        </Link>{' '}
        ·{' '}
        <Link prefetch={false} href="/digest#your-backends">
          Use your own backends
        </Link>
      </p>
      <label className="switch" title={controls ? undefined : 'Sign in as an operator to switch the faults'}>
        <input type="checkbox" checked={status.faults} disabled={!controls || setFaults.isPending} onChange={(event) => setFaults.mutate(event.target.checked)} />
        Faults {status.faults ? 'on' : 'off'}
        {controls ? null : <span className="muted small"> (operators switch them)</span>}
      </label>
      {setFaults.isError ? <p className="bad-text small">{setFaults.error.message}</p> : null}
    </section>
  );
}
