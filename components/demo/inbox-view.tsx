'use client';
// The demo's webhook inbox: what Leasehold's alerts sent to its own receiver, newest first,
// each with whether its signature checked out and how long after the alert it arrived.
import { formatDuration } from '@/lib/domain/duration';
import Link from 'next/link';
import { useQuery } from '@tanstack/react-query';
import { leaseIdPath } from '@/lib/domain/lease-id';
import { fetchJson } from '../live/api';
import { demoInboxSchema } from '@/lib/domain/schemas';
import { EmptyState } from '../ui/empty-state';
import { LoadError } from '../ui/load-error';
import { When } from '../when';

export function InboxView() {
  const inbox = useQuery({
    queryKey: ['demo-inbox'],
    queryFn: ({ signal }) => fetchJson('/api/v1/demo/inbox', demoInboxSchema, signal),
    refetchInterval: 1_000,
    staleTime: 0,
  });
  if (inbox.isError) return <LoadError title="The inbox cannot be read" error={inbox.error} onRetry={() => void inbox.refetch()} retriesItself="It is read again every second" />;
  if (!inbox.data) return <div className="vtable-skeleton" aria-busy="true" aria-label="Loading the inbox" />;
  const { messages } = inbox.data;
  if (messages.length === 0) {
    return (
      <EmptyState title="Nothing has arrived yet">
        <p>When the demo&rsquo;s scheduler misses a renewal or fails over, the alert arrives here within a second. Turn the demo&rsquo;s faults on to make it happen.</p>
      </EmptyState>
    );
  }
  return (
    <ol className="inbox" aria-label="Messages received" data-testid="inbox">
      {messages.map((m) => (
        <li key={`${m.id}-${m.receivedAt}`} className={`inbox-item severity-${m.severity ?? 'info'}`} data-testid="inbox-message">
          <div className="inbox-head">
            <span className={m.verified ? 'badge ok' : 'badge bad'} title={m.problem ?? 'The webhook-signature header checks out with the endpoint\'s secret'}>
              {m.verified ? 'signature verified' : `not verified: ${m.problem}`}
            </span>
            <span className="badge">{m.type?.replace('alert.', '') ?? 'unknown'}</span>
            {m.rule ? <span className="badge">{m.rule}</span> : null}
            <span className="muted">
              <When iso={m.receivedAt} />
              {m.delayMs !== null ? ` · ${formatDuration(m.delayMs, { msBelow: 10_000 })} after it fired` : ''}
            </span>
          </div>
          <p className="inbox-summary">{m.summary ?? '(no summary)'}</p>
          {m.leaseId ? (
            <Link prefetch={false} href={`/leases/${leaseIdPath(m.leaseId)}`}>
              the lease
            </Link>
          ) : null}
          <code className="muted inbox-id">{m.id}</code>
        </li>
      ))}
    </ol>
  );
}
