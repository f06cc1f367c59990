// Any address no page answers (and a notFound() outside the console's pages): a 404 inside
// the console's own frame, with the way back, instead of the framework's bare page.
import Link from 'next/link';
import { ConsoleFrame } from '@/components/console-frame';

export default function NotFound() {
  return (
    <ConsoleFrame>
      <h1>Not found</h1>
      <p className="subtitle">There is no page at this address.</p>
      <section className="panel empty">
        <p>
          The console has these pages: the <Link prefetch={false} href="/">Overview</Link> of every lease, <Link prefetch={false} href="/failovers">Failovers</Link>,{' '}
          <Link prefetch={false} href="/sources">Sources</Link>, <Link prefetch={false} href="/alerts">Alerts</Link> and the <Link prefetch={false} href="/audit">Audit log</Link>. A lease has its own page at <code>/leases/&lt;source&gt;/&lt;key&gt;</code>; open it from the overview.
        </p>
      </section>
    </ConsoleFrame>
  );
}
