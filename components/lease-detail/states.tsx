// The lease page's designed states: loading, an unknown lease, a malformed id, a server that
// does not answer. No hooks: the server page renders the malformed-id state itself.
import Link from 'next/link';
import { EmptyState } from '@/components/ui/empty-state';
import styles from './lease-detail.module.css';

export function OverviewLink({ range }: { range?: string | null }) {
  return <Link prefetch={false} href={range ? `/?range=${encodeURIComponent(range)}` : '/'}>← Back to the overview</Link>;
}

function Title({ id }: { id: string }) {
  return (
    <>
      <p className={styles.crumbs}>
        <Link prefetch={false} href="/">Overview</Link> / lease
      </p>
      <h1 className={styles.leaseId}>{id}</h1>
    </>
  );
}

/** While the lease loads: the same blocks, the same heights, so nothing jumps when it arrives. */
export function LeaseSkeleton({ id }: { id: string }) {
  return (
    <div aria-busy="true">
      <Title id={id} />
      <p className={styles.subtitle}>
        <span role="status">Loading the lease…</span>
      </p>
      <div className={styles.skeletonBlock} style={{ height: 260 }} aria-hidden="true" />
      <div className={styles.skeletonBlock} style={{ height: 48, width: 220 }} aria-hidden="true" />
      <div className={styles.charts} style={{ marginBottom: 16 }} aria-hidden="true">
        <div className={styles.skeletonBlock} style={{ height: 380, marginBottom: 0 }} />
        <div className={styles.skeletonBlock} style={{ height: 380, marginBottom: 0 }} />
      </div>
      <div className={styles.skeletonBlock} style={{ height: 150 }} aria-hidden="true" />
      <div className={styles.skeletonBlock} style={{ height: 320 }} aria-hidden="true" />
    </div>
  );
}

export function LeaseNotFound({ id, range }: { id: string; range?: string | null }) {
  return (
    <>
      <Title id={id} />
      <EmptyState title="This lease is not known">
        <p>
          Leasehold has no lease with the id <code>{id}</code>. It may have disappeared from its source before Leasehold read it, been removed
          from the store, or the id may be wrong: lease ids are <code>&lt;source&gt;/&lt;key&gt;</code>, for example{' '}
          <code>redis-main/lock:weekly-digest</code>.
        </p>
        <p>
          <OverviewLink range={range} />
        </p>
      </EmptyState>
    </>
  );
}

export function MalformedLeaseId({ input, message, range }: { input: string; message: string; range?: string | null }) {
  return (
    <>
      <p className={styles.crumbs}>
        <Link prefetch={false} href="/">Overview</Link> / lease
      </p>
      <h1>Not a lease id</h1>
      <EmptyState title="This address does not name a lease" tone="error">
        <p>{message}</p>
        <p>
          A lease id is <code>&lt;source&gt;/&lt;key&gt;</code>, given either as plain segments (<code>/leases/pg-main/leases/job</code>) or
          percent-encoded as one (<code>/leases/pg-main%2Fleases%2Fjob</code>). The address asked for <code>{input || '(nothing)'}</code>.
        </p>
        <p>
          <OverviewLink range={range} />
        </p>
      </EmptyState>
    </>
  );
}

export function LeaseLoadFailed({ id, status, message, onRetry, range }: { id: string; status: number; message: string; onRetry: () => void; range?: string | null }) {
  const unreachable = status === 0;
  return (
    <>
      <Title id={id} />
      <EmptyState title={unreachable ? 'The Leasehold server did not answer' : 'The lease could not be loaded'} tone="error">
        {unreachable ? null : <p>{message}</p>}
        <p>
          {unreachable
            ? 'Check that the server is running and that this machine can reach it; the page will show the lease as soon as it answers.'
            : status === 503
              ? 'The store or the lease’s source is not available right now. Check /api/health and the server log.'
              : `The server answered ${status}. Check /api/health and the server log.`}
        </p>
        <p>
          <button type="button" className="button" onClick={onRetry}>
            Try again
          </button>{' '}
          <OverviewLink range={range} />
        </p>
      </EmptyState>
    </>
  );
}
