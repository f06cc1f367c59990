import Link from 'next/link';
import { EmptyState } from '@/components/ui/empty-state';

export const metadata = { title: 'Not found' };

export default function NotFound() {
  return (
    <>
      <h1>Not found</h1>
      <EmptyState title="There is no page at this address">
        <p>
          The console&apos;s pages are the <Link href="/">overview</Link>, <Link href="/failovers">failovers</Link>, <Link href="/sources">sources</Link>,{' '}
          <Link href="/alerts">alerts</Link> and the <Link href="/audit">audit log</Link>; a lease&apos;s page is <code>/leases/&lt;source&gt;/&lt;key&gt;</code>.
        </p>
      </EmptyState>
    </>
  );
}
