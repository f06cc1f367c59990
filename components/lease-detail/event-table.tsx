'use client';
// The lease's events over the chosen range, newest first, filtered by type (kept in the URL
// as ?types=), a page at a time.
import { formatShortInstant } from '@/components/charts/time-axis';
import { useUrlState } from '@/components/live/url-state';
import { useTimeRange } from '@/components/time-range';
import { Badge, type BadgeTone } from '@/components/ui/badge';
import { EmptyState } from '@/components/ui/empty-state';
import { formatDuration } from '@/lib/domain/duration';
import { FORCE_EVENT_TYPES, type ForceEventType } from '@/lib/domain/admin-actions';
import { When } from '@/components/when';
import { isRestart } from '@/lib/domain/health';
import { LEASE_EVENT_TYPES, type EventType, type LeaseEventView } from '@/lib/domain/types';
import styles from './lease-detail.module.css';
import { useEventPages } from './queries';

const TONE: Record<EventType, BadgeTone> = {
  acquired: 'ok',
  renewed: 'muted',
  released: 'muted',
  expired: 'bad',
  taken_over: 'warn',
  // Every admin action's event: someone forced the lease.
  ...(Object.fromEntries(FORCE_EVENT_TYPES.map((type) => [type, 'bad'])) as Record<ForceEventType, BadgeTone>),
  token_regression: 'bad',
  source_down: 'warn',
  source_up: 'ok',
  observation_gap: 'warn',
  unseen_grants: 'muted',
};

/** The types named in ?types=, in the canonical order; unknown names are ignored. */
export function parseTypesParam(raw: string | null): EventType[] {
  if (!raw) return [];
  const named = new Set(raw.split(',').map((t) => t.trim()));
  return LEASE_EVENT_TYPES.filter((type) => named.has(type));
}

/** What the collector added about an event, in a few words. */
function note(event: LeaseEventView): string {
  const detail = (event.detail ?? null) as Record<string, unknown> | null;
  const parts: string[] = [];
  if (isRestart(event)) parts.push('the same node, restarted: no other node took over');
  if (!detail || typeof detail !== 'object') return parts.join('; ');
  if (detail.firstSeen === true) parts.push('first seen');
  if (detail.afterGap === true) parts.push('after an observation gap');
  if (typeof detail.cause === 'string') parts.push(`after ${detail.cause.replace(/_/g, ' ')}`);
  if (detail.queued === true) parts.push('was queued');
  if (typeof detail.reason === 'string') parts.push(`reason: ${detail.reason}`);
  if (typeof detail.actor === 'string') parts.push(`by ${detail.actor}`);
  if (typeof detail.error === 'string') parts.push(detail.error);
  if (event.type === 'unseen_grants' && (typeof detail.count === 'number' || typeof detail.count === 'string')) {
    parts.push(`${detail.count} grant${detail.count === 1 ? '' : 's'} acquired and let go between two reads (tokens ${String(detail.firstToken)}–${String(detail.lastToken)}); holders not seen, or a fence raised by hand`);
  }
  if (typeof detail.afterUnseenGrants === 'number' || typeof detail.afterUnseenGrants === 'string') parts.push(`after ${detail.afterUnseenGrants} unseen grant${detail.afterUnseenGrants === 1 ? '' : 's'}`);
  if (detail.betweenReads === true) parts.push('let go between two reads');
  if (event.type === 'observation_gap' && typeof detail.lastSeenAt === 'string') parts.push(`unseen since ${detail.lastSeenAt.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}`);
  return parts.join('; ');
}

const SKELETON_ROWS = 6;
const COLUMNS = ['Time (UTC)', 'Type', 'Holder', 'Previous holder', 'Token', 'Previous token', 'Gap', 'Note'];

export function EventTable({ id }: { id: string }) {
  const { range } = useTimeRange();
  const [params, setParams] = useUrlState();
  const types = parseTypesParam(params.get('types'));
  const query = useEventPages(id, range.value, types);
  const events = query.data?.pages.flatMap((page) => page.events) ?? [];
  const filtered = types.length > 0;

  const toggle = (type: EventType, on: boolean) => {
    const next = on ? [...types, type] : types.filter((t) => t !== type);
    setParams({ types: next.length === 0 || next.length === LEASE_EVENT_TYPES.length ? null : LEASE_EVENT_TYPES.filter((t) => next.includes(t)).join(',') });
  };

  return (
    <section className="panel" aria-labelledby="event-table-title">
      <div className={styles.timelineHead}>
        <h3 id="event-table-title">Events</h3>
        <span className="muted" style={{ fontSize: 12 }}>
          {range.label.toLowerCase()}, newest first{filtered ? `; ${types.length} of ${LEASE_EVENT_TYPES.length} types` : ''}
        </span>
      </div>
      <fieldset className={styles.filters}>
        <legend>Event types shown (none ticked: all)</legend>
        {LEASE_EVENT_TYPES.map((type) => (
          <label key={type} className={styles.chip}>
            <input type="checkbox" checked={types.includes(type)} onChange={(event) => toggle(type, event.target.checked)} />
            <span className="mono">{type}</span>
          </label>
        ))}
        <button type="button" className="button subtle" onClick={() => setParams({ types: null })} disabled={!filtered}>
          All types
        </button>
      </fieldset>
      <div
        className={styles.tableBox}
        aria-busy={query.isPending || query.isFetchingNextPage}
        data-testid="event-table"
        data-rows={query.isPending ? 0 : events.length}
        data-state={query.isPending ? 'loading' : query.isError && events.length === 0 ? 'error' : events.length === 0 ? 'empty' : 'ready'}
      >
        {query.isError && events.length === 0 ? (
          <EmptyState title="The events could not be loaded" tone="error">
            <p>{query.error.message}</p>
            <p>
              <button type="button" className="button" onClick={() => void query.refetch()}>
                Try again
              </button>
            </p>
          </EmptyState>
        ) : !query.isPending && events.length === 0 ? (
          <EmptyState title={filtered ? 'No events of these types in this range' : 'No events in this range'}>
            <p>
              {filtered
                ? 'Nothing of the ticked types happened. Tick more types, or choose a longer time range.'
                : 'Nobody acquired, released, lost or took over the lease in this range, and its source did not go away. Renewals are charted above, not listed.'}
            </p>
          </EmptyState>
        ) : (
          <table className="data" aria-label={`Events of the lease, ${range.label.toLowerCase()}, newest first`}>
            <thead>
              <tr>
                {COLUMNS.map((column) => (
                  <th scope="col" key={column}>
                    {column}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {query.isPending
                ? Array.from({ length: SKELETON_ROWS }, (_, row) => (
                    <tr key={row} aria-hidden="true">
                      {COLUMNS.map((column) => (
                        <td key={column}>
                          <span className={styles.skeletonLine} style={{ width: column === 'Note' ? 120 : 70 }} />
                        </td>
                      ))}
                    </tr>
                  ))
                : events.map((event) => (
                    <tr key={event.id} data-testid="event-row" data-type={event.type}>
                      <td className="mono" title={event.at}>
                        {formatShortInstant(Date.parse(event.at))}
                        <br />
                        <When iso={event.at} className="muted" />
                      </td>
                      <td>
                        <Badge tone={TONE[event.type] ?? 'muted'}>{event.type}</Badge>
                      </td>
                      <td className="mono">{event.holder ?? '—'}</td>
                      <td className="mono">{event.previousHolder ?? '—'}</td>
                      <td className={`mono${event.type === 'token_regression' ? ' bad-text' : ''}`}>{event.token ?? '—'}</td>
                      <td className="mono">{event.previousToken ?? '—'}</td>
                      <td className="tabular">{event.gapMs === null ? '—' : formatDuration(event.gapMs)}</td>
                      <td className={styles.wrap}>{note(event)}</td>
                    </tr>
                  ))}
            </tbody>
          </table>
        )}
      </div>
      <div className={styles.tableFoot}>
        {query.isPending ? (
          <span>Loading events…</span>
        ) : events.length > 0 ? (
          <>
            <span role="status">
              {events.length.toLocaleString('en')} event{events.length === 1 ? '' : 's'} shown{query.hasNextPage ? '; more in this range' : ', all of this range'}
            </span>
            {query.hasNextPage ? (
              <button type="button" className="button" onClick={() => void query.fetchNextPage()} disabled={query.isFetchingNextPage}>
                {query.isFetchingNextPage ? 'Loading…' : 'Load more'}
              </button>
            ) : null}
            {query.isError ? <span className="bad-text">Could not load: {query.error.message}</span> : null}
          </>
        ) : null}
      </div>
    </section>
  );
}
