'use client';
// The demo's weekly digest: did every user get this week's email exactly once, and what did
// the design absorb on the way (redelivered jobs, a paused scheduler's stale writes)?
import Link from 'next/link';
import { leaseIdPath } from '@/lib/domain/lease-id';
import { EmptyState } from '../ui/empty-state';
import { LoadError } from '../ui/load-error';
import { When } from '../when';
import { useHydrated } from '../live/hydrated';
import { useDemo } from './use-demo';

const SCHEDULER_LEASE = 'demo/pixly.leases/weekly-digest-scheduler';

export function DigestView() {
  const demo = useDemo();
  // The sidebar's demo card reads the same query, maybe before this page hydrates.
  const hydrated = useHydrated();
  if (!hydrated) return <div className="vtable-skeleton" aria-busy="true" aria-label="Loading the demo" />;
  if (demo.isError) return <LoadError title="The demo cannot be read" error={demo.error} onRetry={() => void demo.refetch()} retriesItself="It is read again every two seconds" />;
  if (demo.data === undefined) return <div className="vtable-skeleton" aria-busy="true" aria-label="Loading the demo" />;
  if (demo.data === null) {
    return (
      <EmptyState title="No demo runs on this server">
        <p>This Leasehold observes the sources in its config. The demo starts on the embedded store when no sources are configured.</p>
      </EmptyState>
    );
  }
  const { digest, servers, recentFaults } = demo.data;
  const done = digest.users ? Math.min(1, digest.sentThisWeek / digest.users) : 0;
  const leader = servers.find((s) => s.leader);
  return (
    <>
      <section className="counters" aria-label="This week">
        <Figure label="Users" value={digest.users} testId="users" />
        <Figure label={`Sent, week ${digest.week}`} value={digest.sentThisWeek} testId="sent" tone={digest.weekCompletedAt ? 'ok' : undefined} />
        <Figure label="Redeliveries absorbed" value={digest.redeliveriesAbsorbed.total} testId="absorbed" title={`${digest.redeliveriesAbsorbed.week} this week`} />
        <Figure label="Stale writes rejected" value={digest.staleWritesRejected.total} testId="stale-rejected" title={`${digest.staleWritesRejected.week} this week`} />
        <Figure label="Duplicates delivered" value={digest.duplicatesDelivered} testId="duplicates" tone={digest.duplicatesDelivered === 0 ? 'ok' : 'bad'} />
        <Figure label="Weeks completed" value={digest.weeksCompleted} testId="weeks" />
      </section>

      <section className="panel" aria-label="Progress">
        <h2 className="panel-title">
          Week {digest.week}: {digest.sentThisWeek.toLocaleString('en')} of {digest.users.toLocaleString('en')} digests sent
        </h2>
        <div className="progress" role="progressbar" aria-valuemin={0} aria-valuemax={digest.users} aria-valuenow={digest.sentThisWeek} aria-label={`Week ${digest.week} progress`}>
          <span style={{ width: `${(done * 100).toFixed(1)}%` }} />
        </div>
        <p className="muted">
          Started <When iso={digest.weekStartedAt} />
          {digest.weekCompletedAt ? (
            <>
              , completed <When iso={digest.weekCompletedAt} />; the next week starts a few seconds later.
            </>
          ) : (
            '.'
          )}{' '}
          Emails delivered this week: {digest.deliveredThisWeek.toLocaleString('en')} (one per user; a duplicate would make it more than the digests sent).
        </p>
        <p>
          Scheduler: {leader ? <strong className="mono">{leader.name}</strong> : <span className="warn-text">no leader right now</span>} —{' '}
          <Link prefetch={false} href={`/leases/${leaseIdPath(SCHEDULER_LEASE)}`}>
            its lease, tokens and holder history
          </Link>
        </p>
      </section>

      <section className="panel" aria-label="Fleet">
        <h2 className="panel-title">The fleet</h2>
        <ul className="fleet">
          {servers.map((server) => (
            <li key={server.name} className={`fleet-server ${server.state}`} data-testid="fleet-server" data-state={server.state}>
              <span className="mono">{server.name}</span>
              <span className="small">{server.leader ? 'scheduler' : server.state === 'running' ? 'worker' : server.state}</span>
            </li>
          ))}
        </ul>
        <h3 className="panel-subtitle">Recent faults</h3>
        {recentFaults.length === 0 ? (
          <p className="muted">None yet{demo.data.faults ? ': the first pause comes about 20 s after start.' : ' (faults are off).'}</p>
        ) : (
          <ul className="fault-list">
            {recentFaults.slice(0, 8).map((fault) => (
              <li key={`${fault.at}-${fault.server}-${fault.kind}`}>
                <When iso={fault.at} /> <span className="mono">{fault.server}</span> {fault.detail}
              </li>
            ))}
          </ul>
        )}
      </section>

      <section className="panel" id="your-backends" aria-label="Your own backends">
        <h2 className="panel-title">Leasehold on your own backends</h2>
        <p>
          Write a <code>leasehold.config.json</code> naming your PostgreSQL, Redis and etcd sources (every layout is in <code>docs/configuring-sources.md</code>), set{' '}
          <code>DATABASE_URL</code> for a PostgreSQL store, and restart: with sources configured, the demo does not start. <code>LEASEHOLD_DEMO=off</code> turns it off
          without sources; <code>LEASEHOLD_DEMO_FAULTS=off</code> starts it without faults.
        </p>
      </section>
    </>
  );
}

function Figure({ label, value, testId, tone, title }: { label: string; value: number; testId: string; tone?: 'ok' | 'bad'; title?: string }) {
  return (
    <div className={`counter${tone ? ` ${tone}` : ''}`} data-testid={`digest-${testId}`} title={title}>
      <span className="value">{value.toLocaleString('en')}</span>
      <span className="label">{label}</span>
    </div>
  );
}
